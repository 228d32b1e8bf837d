// Default 16-bit fused ops (core/op_list.hpp): widen the 16-bit tensors into the staging floats,
// run the fp32 op, round its 16-bit outputs. Every backend is right in bf16 and fp16 at once; a
// backend with tensor-core kernels overrides them and reads and writes 16 bits itself.
#include "backends/backend.hpp"

namespace pcnn {

Backend::Widened16 Backend::widen_for_backward_16(Precision p, size_t nx, size_t ny,
                                                  const uint16_t* x, const uint16_t* y,
                                                  const uint16_t* dy, float* staging) {
  const Widened16 w{staging, staging + nx, staging + nx + ny, staging + nx + 2 * ny};
  if (x) widen_16bit(p, nx, x, w.x);
  widen_16bit(p, ny, y, w.y);
  widen_16bit(p, ny, dy, w.dy);
  return w;
}

void Backend::conv2d_fused_forward_16(Precision p, const Conv2dShape& s, const ConvEpilogue& epi,
                                      const uint16_t* x, const float* x32, const float* w,
                                      const float* b, const ConvKept& kept, float* scratch,
                                      float* staging, uint16_t* y) {
  const size_t nx = s.x_size(), ny = fused_output_size(s, epi);
  float* y32 = staging + nx;
  if (!x32) {
    widen_16bit(p, nx, x, staging);
    x32 = staging;
  }
  conv2d_fused_forward(s, epi, x32, w, b, kept, scratch, y32);
  round_to_16bit(p, ny, y32, nullptr, y);
}

void Backend::conv2d_fused_backward_16(Precision p, const Conv2dShape& s, const ConvEpilogue& epi,
                                       const uint16_t* x, const float* x32, const float* w,
                                       const ConvKept& kept, const uint16_t* y,
                                       const uint16_t* dy, float* scratch, float* staging,
                                       uint16_t* dx, float* dw, float* db) {
  const size_t nx = s.x_size();
  // An fp32 input is read as given, not widened.
  const Widened16 v = widen_for_backward_16(p, nx, fused_output_size(s, epi), x32 ? nullptr : x,
                                            y, dy, staging);
  conv2d_fused_backward(s, epi, x32 ? x32 : v.x, w, kept, v.y, v.dy, scratch,
                        dx ? v.dx : nullptr, dw, db);
  if (dx) round_to_16bit(p, nx, v.dx, nullptr, dx);
}

void Backend::linear_forward_16(Precision p, int N, int in, int out, Activation act,
                                const uint16_t* x, const float* w, const float* b, float* staging,
                                uint16_t* y) {
  const size_t nx = size_t(N) * in, ny = size_t(N) * out;
  float* x32 = staging;
  float* y32 = x32 + nx;
  widen_16bit(p, nx, x, x32);
  linear_forward(N, in, out, act, x32, w, b, y32);
  round_to_16bit(p, ny, y32, nullptr, y);
}

void Backend::linear_backward_16(Precision p, int N, int in, int out, Activation act,
                                 const uint16_t* x, const float* w, const uint16_t* y,
                                 const uint16_t* dy, float* scratch, float* staging, uint16_t* dx,
                                 float* dw, float* db) {
  const size_t nx = size_t(N) * in;
  const Widened16 v = widen_for_backward_16(p, nx, size_t(N) * out, x, y, dy, staging);
  linear_backward(N, in, out, act, v.x, w, v.y, v.dy, scratch, dx ? v.dx : nullptr, dw, db);
  if (dx) round_to_16bit(p, nx, v.dx, nullptr, dx);
}

void Backend::softmax_cross_entropy_16(Precision p, int N, int K, const uint16_t* logits,
                                       const int32_t* labels, const float* scale, float* staging,
                                       float* logits32, uint16_t* dlogits, float* metrics) {
  const size_t n = size_t(N) * K;
  float* grad32 = staging;
  float* wide = logits32 ? logits32 : staging + n;
  widen_16bit(p, n, logits, wide);
  softmax_cross_entropy(N, K, wide, labels, dlogits ? grad32 : nullptr, metrics);
  if (dlogits) round_to_16bit(p, n, grad32, scale, dlogits);
}

}  // namespace pcnn
