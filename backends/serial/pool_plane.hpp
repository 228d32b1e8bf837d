// Pooling of one (H,W) plane, the reference loops: the serial backend runs them plane by plane,
// and openmp (pool_plane.hpp) for every shape it has no special case for. Windows as
// core/pool_math.hpp clips them: max takes the first maximum in row-major window order; avg
// divides by the window's in-image count (window^2 without padding).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/pool_math.hpp"
#include "core/shapes.hpp"

namespace pcnn::serial {

// x (H,W) -> y (P,Q); overwrites y, and argmax (P,Q) when max pooling is given one.
inline void pool_forward_plane(PoolKind kind, const Pool2dShape& s, const float* x, float* y,
                               uint8_t* argmax = nullptr) {
  const int P = s.P(), Q = s.Q();
  const bool is_max = kind == PoolKind::Max;
  for (int p = 0; p < P; ++p)
    for (int q = 0; q < Q; ++q) {
      const PoolWindow b = pool_window(s, p, q);
      int best;
      y[size_t(p) * Q + q] = pool_finish(pool_window_reduce(x, s.W, b, is_max, best), b, is_max);
      if (is_max && argmax) argmax[size_t(p) * Q + q] = pool_argmax_byte(s, p, q, best);
    }
}

// argmax, y, dy (P,Q) -> dx (H,W) = the gradient max pooling sends back through act
// (pool_gather_argmax_grad); overwrites dx.
inline void max_pool_backward_argmax_plane(const Pool2dShape& s, Activation act,
                                           const uint8_t* argmax, const float* y, const float* dy,
                                           float* dx) {
  const int P = s.P(), Q = s.Q();
  for (int h = 0; h < s.H; ++h) {
    int p_lo, p_hi;
    windows_covering(h, s.window, s.stride, s.pad, P, p_lo, p_hi);
    for (int w = 0; w < s.W; ++w) {
      int q_lo, q_hi;
      windows_covering(w, s.window, s.stride, s.pad, Q, q_lo, q_hi);
      dx[size_t(h) * s.W + w] =
          pool_gather_argmax_grad(s, act, argmax, y, dy, h, w, p_lo, p_hi, q_lo, q_hi);
    }
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
