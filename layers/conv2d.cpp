// Conv2D: shapes, parameters, and the calls into the fused convolution entry points.
#include "layers/conv2d.hpp"

#include <sstream>

#include "core/check.hpp"
#include "core/vocabulary.hpp"

namespace pcnn {

Conv2D::Conv2D(FeatureShape in, const Conv2dParams& p)
    : WeightedLayer(p.maps, in.c * p.kernel * p.kernel, p.maps * p.kernel * p.kernel, p.init),
      p_(p) {
  in_ = in;
  const Conv2dShape s = shape(1);
  PCNN_CHECK(s.P() >= 1 && s.Q() >= 1, "conv " << p.kernel << "x" << p.kernel << " does not fit a "
                                              << in.h << "x" << in.w << " input");
  out_ = {p.maps, s.P(), s.Q()};
  if (p.epilogue.pool != PoolKind::None) {
    const int w = p.epilogue.pool_window;
    PCNN_CHECK(out_.h >= w && out_.w >= w, "pool " << w << " does not fit a " << out_.h << "x"
                                                   << out_.w << " feature map");
    const Pool2dShape ps = pooled_shape(s, p.epilogue);
    out_.h = ps.P();
    out_.w = ps.Q();
  }
}

Conv2dShape Conv2D::shape(int N) const {
  Conv2dShape s;
  s.N = N; s.C = in_.c; s.H = in_.h; s.W = in_.w;
  s.K = p_.maps; s.R = s.S = p_.kernel; s.stride = p_.stride; s.pad = p_.pad;
  return s;
}

std::string Conv2D::describe() const {
  std::ostringstream os;
  os << "conv " << p_.kernel << "x" << p_.kernel << " x" << p_.maps;
  if (p_.stride != 1) os << " stride " << p_.stride;
  if (p_.pad) os << " pad " << p_.pad;
  if (p_.epilogue.act != Activation::None) os << " +" << activation_name(p_.epilogue.act);
  if (p_.epilogue.pool != PoolKind::None)
    os << " +" << pool_name(p_.epilogue.pool) << " " << p_.epilogue.pool_window;
  return os.str();
}

// What setup() below allocates, per sample: max pooling's indices, or avg pooling's pre-pool
// activations (ConvKept).
size_t Conv2D::kept_bytes_per_sample() const { return kept_bytes_per_image(shape(1), p_.epilogue); }

// The pre-pool output on its way to pooling, or its gradient on the way back.
size_t Conv2D::workspace_floats_per_sample() const {
  const bool epilogue = p_.epilogue.pool != PoolKind::None || p_.epilogue.act != Activation::None;
  return epilogue ? shape(1).y_size() : 0;
}

void Conv2D::setup(Backend& be, int max_batch) {
  kept_view_ = ConvKept{};
  if (!kept_bytes_per_sample()) return;
  kept_ = DeviceArray<uint8_t>(be, size_t(max_batch) * kept_bytes_per_sample());
  if (keeps_argmax(p_.epilogue)) kept_view_.argmax = kept_.get();
  if (keeps_act_out(p_.epilogue)) kept_view_.act_out = reinterpret_cast<float*>(kept_.get());
}

void Conv2D::forward(Backend& be, int N, const float* x, float* y) {
  be.conv2d_fused_forward(shape(N), p_.epilogue, x, w_, b_, kept_view_, workspace_, y);
}

void Conv2D::backward(Backend& be, int N, const float* x, const float* y, const float* dy,
                      float* dx) {
  be.conv2d_fused_backward(shape(N), p_.epilogue, x, w_, kept_view_, y, dy, workspace_, dx, dw_,
                           db_);
}

void Conv2D::forward16(Backend& be, int N, Precision p, const uint16_t* x, uint16_t* y) {
  be.conv2d_fused_forward_16(p, shape(N), p_.epilogue, x, nullptr, w_, b_, kept_view_,
                             workspace_, staging_, y);
}

void Conv2D::backward16(Backend& be, int N, Precision p, const uint16_t* x, const uint16_t* y,
                        const uint16_t* dy, uint16_t* dx) {
  be.conv2d_fused_backward_16(p, shape(N), p_.epilogue, x, nullptr, w_, kept_view_, y, dy,
                              workspace_, staging_, dx, dw_, db_);
}

void Conv2D::forward16_fp32_input(Backend& be, int N, Precision p, const float* x, uint16_t* y) {
  be.conv2d_fused_forward_16(p, shape(N), p_.epilogue, nullptr, x, w_, b_, kept_view_,
                             workspace_, staging_, y);
}

void Conv2D::backward16_fp32_input(Backend& be, int N, Precision p, const float* x,
                                   const uint16_t* y, const uint16_t* dy) {
  be.conv2d_fused_backward_16(p, shape(N), p_.epilogue, nullptr, x, w_, kept_view_, y, dy,
                              workspace_, staging_, nullptr, dw_, db_);
}

}  // namespace pcnn
