// The 16-bit passes of a layer, composed from its fp32 passes (layers/layer.hpp): the storage
// precision changes where the values rest between layers, never what a layer computes.
#include "core/check.hpp"
#include "layers/layer.hpp"

namespace pcnn {

void Layer::forward16(Backend& be, int N, Precision p, const uint16_t* x, uint16_t* y) {
  PCNN_CHECK(staging_, "16-bit pass of '" << describe() << "' without staging memory");
  const size_t nx = size_t(N) * in_.size(), ny = size_t(N) * out_.size();
  float* x32 = staging_;
  float* y32 = x32 + nx;
  be.widen_16bit(p, nx, x, x32);
  forward(be, N, x32, y32);
  be.round_to_16bit(p, ny, y32, nullptr, y);
}

void Layer::backward16(Backend& be, int N, Precision p, const uint16_t* x, const uint16_t* y,
                       const uint16_t* dy, uint16_t* dx) {
  PCNN_CHECK(staging_, "16-bit pass of '" << describe() << "' without staging memory");
  const size_t nx = size_t(N) * in_.size();
  const Backend::Widened16 v =
      be.widen_for_backward_16(p, nx, size_t(N) * out_.size(), x, y, dy, staging_);
  backward(be, N, v.x, v.y, v.dy, dx ? v.dx : nullptr);
  if (dx) be.round_to_16bit(p, nx, v.dx, nullptr, dx);
}

void Layer::forward16_fp32_input(Backend& be, int N, Precision p, const float* x, uint16_t* y) {
  (void)be, (void)N, (void)p, (void)x, (void)y;
  PCNN_CHECK(false, "'" << describe() << "' does not read an fp32 input in a 16-bit model");
}

void Layer::backward16_fp32_input(Backend& be, int N, Precision p, const float* x,
                                  const uint16_t* y, const uint16_t* dy) {
  (void)be, (void)N, (void)p, (void)x, (void)y, (void)dy;
  PCNN_CHECK(false, "'" << describe() << "' does not read an fp32 input in a 16-bit model");
}

}  // namespace pcnn
