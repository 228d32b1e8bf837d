// Pooling of one (H,W) plane, the reference loops: the serial backend runs them plane by plane,
// and openmp (pool_plane.hpp) for every shape it has no special case for. No padding; max takes
// the first maximum in row-major window order; avg divides by window^2.
#pragma once

#include <cstddef>

#include "core/shapes.hpp"

namespace pcnn::serial {

// x (H,W) -> y (P,Q); overwrites y.
inline void pool_forward_plane(PoolKind kind, const Pool2dShape& s, const float* x, float* y) {
  const int P = s.P(), Q = s.Q(), win = s.window, st = s.stride;
  const float inv_area = 1.f / float(win * win);
  for (int p = 0; p < P; ++p)
    for (int q = 0; q < Q; ++q) {
      const float* w = x + size_t(p * st) * s.W + q * st;
      float acc = kind == PoolKind::Max ? w[0] : 0.f;
      for (int r = 0; r < win; ++r)
        for (int t = 0; t < win; ++t) {
          const float v = w[size_t(r) * s.W + t];
          if (kind == PoolKind::Max) {
            if (v > acc) acc = v;
          } else {
            acc += v;
          }
        }
      y[size_t(p) * Q + q] = kind == PoolKind::Max ? acc : acc * inv_area;
    }
}

// x (H,W), dy (P,Q) -> dx (H,W); overwrites dx. Max routes to the argmax recomputed from x;
// overlapping windows add up.
inline void pool_backward_plane(PoolKind kind, const Pool2dShape& s, const float* x,
                                const float* dy, float* dx) {
  const int P = s.P(), Q = s.Q(), win = s.window, st = s.stride;
  for (size_t i = 0; i < size_t(s.H) * s.W; ++i) dx[i] = 0.f;
  const float inv_area = 1.f / float(win * win);
  for (int p = 0; p < P; ++p)
    for (int q = 0; q < Q; ++q) {
      const size_t base = size_t(p * st) * s.W + q * st;
      const float g = dy[size_t(p) * Q + q];
      if (kind == PoolKind::Max) {
        size_t best = base;
        for (int r = 0; r < win; ++r)
          for (int t = 0; t < win; ++t) {
            const size_t i = base + size_t(r) * s.W + t;
            if (x[i] > x[best]) best = i;
          }
        dx[best] += g;
      } else {
        for (int r = 0; r < win; ++r)
          for (int t = 0; t < win; ++t) dx[base + size_t(r) * s.W + t] += g * inv_area;
      }
    }
}

}  // namespace pcnn::serial
