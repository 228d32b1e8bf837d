// Shapes of the convolution and pooling kernels, shared by layers, backends, tests and bench.
#pragma once

#include <cstddef>
#include <cstdint>

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

// Elements of a fused convolution's output (N,K,P,Q), pooled when the epilogue pools.
inline size_t fused_output_size(const Conv2dShape& s, const ConvEpilogue& epi) {
  return epi.pool == PoolKind::None ? s.y_size() : pooled_shape(s, epi).y_size();
}

// Max pooling keeps one byte per output, the place of its window's maximum (core/pool_math.hpp):
// windows of up to 16x16. A larger max pool stays a layer of its own (models/model_spec.cpp).
inline constexpr int kMaxArgmaxWindow = 16;

// What a fused convolution keeps between its forward and its backward besides its output y
// (the layer allocates it, the backend writes it in the forward and reads it in the backward):
// - max pooling: argmax, one byte per pooled output (pool2d_forward's indices). The derivative
//   of the activation at the maximum comes from y itself: every activation is non-decreasing,
//   so pooling act(z) picks the element act(max z) and y is the activation's output there.
// - avg pooling with an activation: act_out, the (N,K,P,Q) activation output before pooling.
// - otherwise nothing (no pooling: y is the activation's output; avg without one: dy / area).
struct ConvKept {
  uint8_t* argmax = nullptr;
  float* act_out = nullptr;
};

inline bool keeps_argmax(const ConvEpilogue& e) { return e.pool == PoolKind::Max; }
inline bool keeps_act_out(const ConvEpilogue& e) {
  return e.pool == PoolKind::Avg && e.act != Activation::None;
}
// Where a fused forward that materialises the activation's pre-pool output writes it: y itself
// without pooling, the kept act_out where avg pooling keeps it, else the transient scratch.
inline float* pre_pool_output(const ConvEpilogue& e, const ConvKept& kept, float* scratch,
                              float* y) {
  if (e.pool == PoolKind::None) return y;
  return keeps_act_out(e) ? kept.act_out : scratch;
}
// The bytes of ConvKept one image needs (s.N is ignored: one image).
inline size_t kept_bytes_per_image(const Conv2dShape& s, const ConvEpilogue& e) {
  Conv2dShape one = s;
  one.N = 1;
  if (keeps_argmax(e)) return pooled_shape(one, e).y_size();
  if (keeps_act_out(e)) return one.y_size() * sizeof(float);
  return 0;
}

}  // namespace pcnn
