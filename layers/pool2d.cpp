// Pool2D: shapes and the calls into the pooling kernels.
#include "layers/pool2d.hpp"

#include "core/check.hpp"
#include "core/vocabulary.hpp"

namespace pcnn {

Pool2D::Pool2D(FeatureShape in, PoolKind kind, int window, int stride, int pad)
    : kind_(kind), window_(window), stride_(stride), pad_(pad) {
  in_ = in;
  PCNN_CHECK(pad >= 0 && pad < window, "pool " << window << ": pad " << pad << " is outside [0, "
                                               << window << ")");
  PCNN_CHECK(in.h + 2 * pad >= window && in.w + 2 * pad >= window,
             "pool " << window << " does not fit a " << in.h << "x" << in.w << " feature map");
  const Pool2dShape s = shape(1);
  out_ = {in.c, s.P(), s.Q()};
}

Pool2dShape Pool2D::shape(int N) const {
  Pool2dShape s;
  s.N = N; s.C = in_.c; s.H = in_.h; s.W = in_.w; s.window = window_; s.stride = stride_;
  s.pad = pad_;
  return s;
}

std::string Pool2D::describe() const {
  return std::string(pool_name(kind_)) + " " + std::to_string(window_) + " stride " +
         std::to_string(stride_) + (pad_ ? " pad " + std::to_string(pad_) : "");
}

void Pool2D::forward(Backend& be, int N, const float* x, float* y) {
  be.pool2d_forward(kind_, shape(N), x, y, nullptr);
}

void Pool2D::backward(Backend& be, int N, const float* x, const float*, const float* dy,
                      float* dx) {
  if (dx) be.pool2d_backward(kind_, shape(N), x, dy, dx);
}

}  // namespace pcnn
