// Pooling of one (H,W) plane, the reference loops: the serial backend runs them plane by plane,
// and openmp (pool_plane.hpp) for every shape it has no special case for. Windows as
// core/pool_math.hpp clips them: max takes the first maximum in row-major window order; avg
// divides by the window's in-image count (window^2 without padding).
#pragma once

#include <cstddef>

#include "core/pool_math.hpp"
#include "core/shapes.hpp"

namespace pcnn::serial {

// x (H,W) -> y (P,Q); overwrites y.
inline void pool_forward_plane(PoolKind kind, const Pool2dShape& s, const float* x, float* y) {
  const int P = s.P(), Q = s.Q();
  const bool is_max = kind == PoolKind::Max;
  for (int p = 0; p < P; ++p)
    for (int q = 0; q < Q; ++q) {
      const PoolWindow b = pool_window(s, p, q);
      int best;
      y[size_t(p) * Q + q] = pool_finish(pool_window_reduce(x, s.W, b, is_max, best), b, is_max);
    }
}

// x (H,W), dy (P,Q) -> dx (H,W); overwrites dx. Max routes to the argmax recomputed from x;
// overlapping windows add up.
inline void pool_backward_plane(PoolKind kind, const Pool2dShape& s, const float* x,
                                const float* dy, float* dx) {
  const int P = s.P(), Q = s.Q();
  const bool is_max = kind == PoolKind::Max;
  for (size_t i = 0; i < size_t(s.H) * s.W; ++i) dx[i] = 0.f;
  for (int p = 0; p < P; ++p)
    for (int q = 0; q < Q; ++q) {
      const PoolWindow b = pool_window(s, p, q);
      const float g = dy[size_t(p) * Q + q];
      if (is_max) {
        int best;
        pool_window_reduce(x, s.W, b, true, best);
        dx[best] += g;
      } else {
        const float share = g * (1.f / float(b.count()));
        for (int h = b.h0; h < b.h1; ++h)
          for (int w = b.w0; w < b.w1; ++w) dx[size_t(h) * s.W + w] += share;
      }
    }
}

}  // namespace pcnn::serial
