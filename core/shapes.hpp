// Shapes of the convolution and pooling kernels, shared by layers, backends, tests and bench.
#pragma once

#include <cstddef>

#include "core/host_device.hpp"
#include "core/vocabulary.hpp"

namespace pcnn {

// How many positions a window of `window` takes over `in` elements padded by `pad` on each side,
// `stride` apart: the one formula of pooled and convolved sizes (shapes, layers, spec checks).
template <class I>
PCNN_HD constexpr I window_positions(I in, I window, I stride, I pad) {
  return (in + 2 * pad - window) / stride + 1;
}

// x (N,C,H,W), w (K,C,R,S) -> y (N,K,P,Q); P = (H + 2*pad - R)/stride + 1.
struct Conv2dShape {
  int N = 1, C = 1, H = 1, W = 1;  // input
  int K = 1, R = 1, S = 1;         // output channels, kernel height and width
  int stride = 1, pad = 0;
  PCNN_HD int P() const { return (H + 2 * pad - R) / stride + 1; }
  PCNN_HD int Q() const { return (W + 2 * pad - S) / stride + 1; }
  size_t x_size() const { return size_t(N) * C * H * W; }
  size_t w_size() const { return size_t(K) * C * R * S; }
  size_t y_size() const { return size_t(N) * K * P() * Q(); }
  // Multiply-adds of the forward pass times two.
  double forward_flops() const { return 2.0 * double(y_size()) * C * R * S; }
};

// x (N,C,H,W) -> y (N,C,P,Q); P = (H + 2*pad - window)/stride + 1. Padding is never read: a
// window covers only its in-image elements (core/pool_math.hpp); pad < window.
struct Pool2dShape {
  int N = 1, C = 1, H = 1, W = 1;
  int window = 2, stride = 2;
  int pad = 0;
  PCNN_HD int P() const { return window_positions(H, window, stride, pad); }
  PCNN_HD int Q() const { return window_positions(W, window, stride, pad); }
  size_t x_size() const { return size_t(N) * C * H * W; }
  size_t y_size() const { return size_t(N) * C * P() * Q(); }
};

// What may follow a convolution inside one fused call: bias is always part of the convolution.
struct ConvEpilogue {
  Activation act = Activation::None;
  PoolKind pool = PoolKind::None;
  int pool_window = 2;
  int pool_stride = 2;
};

// The pooling that a fused epilogue applies to the convolution's (N,K,P,Q) output.
PCNN_HD inline Pool2dShape pooled_shape(const Conv2dShape& s, const ConvEpilogue& epi) {
  Pool2dShape p;
  p.N = s.N; p.C = s.K; p.H = s.P(); p.W = s.Q();
  p.window = epi.pool_window; p.stride = epi.pool_stride;
  return p;
}

}  // namespace pcnn
