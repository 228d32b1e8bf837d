// Default fused kernels, composed from the basic ones: a backend that fuses overrides them, and
// no layer is written twice.
#include "backends/backend.hpp"

namespace pcnn {

void Backend::conv2d_fused_forward(const Conv2dShape& s, const ConvEpilogue& epi, const float* x,
                                   const float* w, const float* b, const ConvKept& kept,
                                   float* scratch, float* y) {
  float* pre = pre_pool_output(epi, kept, scratch, y);
  conv2d_forward(s, x, w, b, pre);
  if (epi.act != Activation::None) activation_forward(epi.act, s.y_size(), pre, pre);
  if (epi.pool != PoolKind::None)
    pool2d_forward(epi.pool, pooled_shape(s, epi), pre, y, kept.argmax);
}

void Backend::conv2d_fused_backward(const Conv2dShape& s, const ConvEpilogue& epi, const float* x,
                                    const float* w, const ConvKept& kept, const float* y,
                                    const float* dy, float* scratch, float* dx, float* dw,
                                    float* db) {
  // d(pre-activation): back through the pooling and the activation, into scratch.
  const float* d_pre = dy;
  if (epi.pool == PoolKind::Max) {
    max_pool_backward_argmax(pooled_shape(s, epi), epi.act, kept.argmax, y, dy, scratch);
    d_pre = scratch;
  } else if (epi.pool == PoolKind::Avg) {
    // avg reads no x: without a kept act_out, any plane-sized buffer stands in for it
    pool2d_backward(epi.pool, pooled_shape(s, epi), kept.act_out ? kept.act_out : scratch, dy,
                    scratch);
    if (epi.act != Activation::None)
      activation_backward(epi.act, s.y_size(), kept.act_out, scratch, scratch);
    d_pre = scratch;
  } else if (epi.act != Activation::None) {
    activation_backward(epi.act, s.y_size(), y, dy, scratch);
    d_pre = scratch;
  }
  conv2d_backward_weights(s, x, d_pre, dw, db);
  if (dx) conv2d_backward_data(s, d_pre, w, dx);
}

void Backend::linear_forward(int N, int in, int out, Activation act, const float* x,
                             const float* w, const float* b, float* y) {
  gemm(false, true, N, out, in, 1.f, x, in, w, in, 0.f, y, out);
  if (b) bias_add(N, out, 1, b, y);
  if (act != Activation::None) activation_forward(act, size_t(N) * out, y, y);
}

void Backend::linear_backward(int N, int in, int out, Activation act, const float* x,
                              const float* w, const float* y, const float* dy, float* scratch,
                              float* dx, float* dw, float* db) {
  const float* d_pre = dy;
  if (act != Activation::None) {
    activation_backward(act, size_t(N) * out, y, dy, scratch);
    d_pre = scratch;
  }
  gemm(true, false, out, in, N, 1.f, d_pre, out, x, in, 0.f, dw, in);  // dw = d_pre^T x
  if (db) bias_backward(N, out, 1, d_pre, db);
  if (dx) gemm(false, false, N, in, out, 1.f, d_pre, out, w, in, 0.f, dx, in);  // dx = d_pre w
}

}  // namespace pcnn
