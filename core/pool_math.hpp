// The windows of 2-D pooling with padding, written once for every backend (PCNN_HD: the CUDA
// kernels call the same code). A window covers only its in-image elements: max ignores the
// padding (as if it held -inf, like ONNX and PyTorch) and avg divides by the number of in-image
// elements (ONNX's count_include_pad = 0). With pad == 0 every window is whole and avg divides by
// window^2, as before padding existed.
#pragma once

#include <cstdint>

#include "core/activation_math.hpp"
#include "core/host_device.hpp"
#include "core/shapes.hpp"

namespace pcnn {

// Output (p, q)'s window, clipped to the image: rows [h0, h1), columns [w0, w1). Never empty
// while pad < window (check_spec refuses more).
struct PoolWindow {
  int h0, h1, w0, w1;
  PCNN_HD int count() const { return (h1 - h0) * (w1 - w0); }
};

PCNN_HD inline PoolWindow pool_window(const Pool2dShape& s, int p, int q) {
  const int top = p * s.stride - s.pad, left = q * s.stride - s.pad;
  PoolWindow b;
  b.h0 = top < 0 ? 0 : top;
  b.h1 = top + s.window < s.H ? top + s.window : s.H;
  b.w0 = left < 0 ? 0 : left;
  b.w1 = left + s.window < s.W ? left + s.window : s.W;
  return b;
}

// The windows along one axis (of `outputs` positions) whose clipped range holds input index i:
// first..last, inclusive (first > last when none does).
PCNN_HD inline void windows_covering(int i, int window, int stride, int pad, int outputs,
                                     int& first, int& last) {
  const int at = i + pad;  // i's position in the padded axis
  first = at >= window ? (at - window) / stride + 1 : 0;
  last = at / stride < outputs - 1 ? at / stride : outputs - 1;
}

// The max (the first maximum in row-major order; NaN never wins) or the sum of a window's
// elements of one (H, W) plane with row stride W; best: the plane index of the maximum.
PCNN_HD inline float pool_window_reduce(const float* plane, int W, const PoolWindow& b,
                                        bool is_max, int& best) {
  best = b.h0 * W + b.w0;
  float acc = is_max ? plane[best] : 0.f;
  for (int h = b.h0; h < b.h1; ++h)
    for (int w = b.w0; w < b.w1; ++w) {
      const float v = plane[h * W + w];
      if (is_max) {
        if (v > acc) {
          acc = v;
          best = h * W + w;
        }
      } else {
        acc += v;
      }
    }
  return acc;
}

// The pooled value of a reduced window: max as is, avg times 1 / (its in-image count).
PCNN_HD inline float pool_finish(float acc, const PoolWindow& b, bool is_max) {
  return is_max ? acc : acc * (1.f / float(b.count()));
}

// The gradient reaching pixel (h, w) of one (H, W) plane from the windows p_lo..p_hi x
// q_lo..q_hi that hold it (windows_covering): max sends a window's dy to its first maximum only,
// avg spreads it evenly over the window's in-image pixels. dy_plane: the plane's (P, Q) dy.
PCNN_HD inline float pool_gather_grad(const Pool2dShape& s, const float* plane,
                                      const float* dy_plane, bool is_max, int h, int w, int p_lo,
                                      int p_hi, int q_lo, int q_hi) {
  const int Q = s.Q();
  float acc = 0.f;
  for (int p = p_lo; p <= p_hi; ++p)
    for (int q = q_lo; q <= q_hi; ++q) {
      const float g = dy_plane[p * Q + q];
      const PoolWindow b = pool_window(s, p, q);
      if (is_max) {
        int best;
        pool_window_reduce(plane, s.W, b, true, best);
        if (best == h * s.W + w) acc += g;
      } else {
        acc += g * (1.f / float(b.count()));
      }
    }
  return acc;
}

// Max pooling's kept index of output (p, q): where its maximum lies in the window, counted
// row-major over the whole window (clipped or not), so one byte holds it (window <=
// kMaxArgmaxWindow). best: the plane index pool_window_reduce gave.
PCNN_HD inline uint8_t pool_argmax_byte(const Pool2dShape& s, int p, int q, int best) {
  const int top = p * s.stride - s.pad, left = q * s.stride - s.pad;
  return uint8_t((best / s.W - top) * s.window + (best % s.W - left));
}

// The gradient reaching pixel (h, w) of one (H, W) plane from max-pooling windows p_lo..p_hi x
// q_lo..q_hi (windows_covering) whose kept index names it: each such window sends dy *
// act'(y), y its pooled output (act: the activation before the pooling; None sends dy).
// argmax_plane, y_plane, dy_plane: the plane's (P, Q) indices, outputs and gradients.
PCNN_HD inline float pool_gather_argmax_grad(const Pool2dShape& s, Activation act,
                                             const uint8_t* argmax_plane, const float* y_plane,
                                             const float* dy_plane, int h, int w, int p_lo,
                                             int p_hi, int q_lo, int q_hi) {
  const int Q = s.Q();
  float acc = 0.f;
  for (int p = p_lo; p <= p_hi; ++p)
    for (int q = q_lo; q <= q_hi; ++q) {
      const int at = (h - (p * s.stride - s.pad)) * s.window + (w - (q * s.stride - s.pad));
      if (argmax_plane[p * Q + q] == at) acc += activation_grad(act, dy_plane, y_plane, p * Q + q);
    }
  return acc;
}

}  // namespace pcnn
