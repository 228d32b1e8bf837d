// Pooling of one (H,W) plane, called per plane by pool2d and by the fused conv kernels from
// their own threads. Same rules as the contract: no padding, max takes the first maximum in
// row-major window order, avg divides by window^2.
#pragma once

#include <cstddef>

#include "core/shapes.hpp"

namespace pcnn::omp {

// x (H,W) -> y (P,Q); overwrites y.
inline void pool_forward_plane(PoolKind kind, const Pool2dShape& s, const float* x, float* y) {
  const int P = s.P(), Q = s.Q(), win = s.window, st = s.stride;
  if (kind == PoolKind::Max && win == 2 && st == 2) {
    // The LeNet case, written out: two input rows give one output row.
    for (int p = 0; p < P; ++p) {
      const float* r0 = x + size_t(2 * p) * s.W;
      const float* r1 = r0 + s.W;
      float* out = y + size_t(p) * Q;
      for (int q = 0; q < Q; ++q) {
        float m = r0[2 * q];
        if (r0[2 * q + 1] > m) m = r0[2 * q + 1];
        if (r1[2 * q] > m) m = r1[2 * q];
        if (r1[2 * q + 1] > m) m = r1[2 * q + 1];
        out[q] = m;
      }
    }
    return;
  }
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

// x (H,W), dy (P,Q) -> dx (H,W); overwrites dx. Max routes to the argmax recomputed from x.
inline void pool_backward_plane(PoolKind kind, const Pool2dShape& s, const float* x,
                                const float* dy, float* dx) {
  const int P = s.P(), Q = s.Q(), win = s.window, st = s.stride;
  if (kind == PoolKind::Max && win == 2 && st == 2) {
    // The LeNet case: windows tile the plane, so every covered pixel is written once (g at the
    // window's first maximum, 0 elsewhere) and only an odd last row / column is left to clear.
    for (int p = 0; p < P; ++p) {
      const float* x0 = x + size_t(2 * p) * s.W;
      const float* x1 = x0 + s.W;
      float* d0 = dx + size_t(2 * p) * s.W;
      float* d1 = d0 + s.W;
      for (int q = 0; q < Q; ++q) {
        // Branch-free first maximum: which of the four is the argmax is data-dependent and
        // mispredicts as a branch.
        const float a = x0[2 * q], b = x0[2 * q + 1], c = x1[2 * q], d = x1[2 * q + 1];
        const bool gb = b > a;
        const float mab = gb ? b : a;
        const bool gc = c > mab;
        const bool gd = d > (gc ? c : mab);
        const float g = dy[size_t(p) * Q + q];
        d0[2 * q] = (gb || gc || gd) ? 0.f : g;
        d0[2 * q + 1] = (gb && !gc && !gd) ? g : 0.f;
        d1[2 * q] = (gc && !gd) ? g : 0.f;
        d1[2 * q + 1] = gd ? g : 0.f;
      }
      for (int w = 2 * Q; w < s.W; ++w) d0[w] = d1[w] = 0.f;
    }
    for (size_t i = size_t(2 * P) * s.W; i < size_t(s.H) * s.W; ++i) dx[i] = 0.f;
    return;
  }
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

}  // namespace pcnn::omp
