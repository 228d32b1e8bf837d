// Global average pooling (Lin et al. 2014): (C,H,W) -> (C,1,1), the mean of each channel.
#pragma once

#include "layers/layer.hpp"

namespace pcnn {

class GlobalAvgPool : public Layer {
 public:
  explicit GlobalAvgPool(FeatureShape in) {
    in_ = in;
    out_ = {in.c, 1, 1};
  }
  std::string describe() const override { return "globalavgpool"; }
  void forward(Backend& be, int N, const float* x, float* y) override {
    be.global_avg_pool_forward(N, in_.c, in_.h * in_.w, x, y);
  }
  void backward(Backend& be, int N, const float*, const float*, const float* dy,
                float* dx) override {
    if (dx) be.global_avg_pool_backward(N, in_.c, in_.h * in_.w, dy, dx);
  }
  double forward_flops(int N) const override { return double(N) * in_.size(); }
  double backward_flops(int N) const override { return forward_flops(N); }
};

}  // namespace pcnn
