// Stand-alone element-wise activations (any row of the table in core/vocabulary.hpp), for unfused
// models.
#pragma once

#include "layers/layer.hpp"

namespace pcnn {

class ActivationLayer : public Layer {
 public:
  ActivationLayer(FeatureShape in, Activation act) : act_(act) { in_ = out_ = in; }
  std::string describe() const override;
  void forward(Backend& be, int N, const float* x, float* y) override {
    be.activation_forward(act_, size_t(N) * in_.size(), x, y);
  }
  void backward(Backend& be, int N, const float*, const float* y, const float* dy,
                float* dx) override {
    if (dx) be.activation_backward(act_, size_t(N) * in_.size(), y, dy, dx);
  }
  double forward_flops(int N) const override { return double(N) * in_.size(); }
  double backward_flops(int N) const override { return forward_flops(N); }

 private:
  Activation act_;
};

// Flatten: (C,H,W) -> (C*H*W): the same memory, so the model aliases its buffers.
class Flatten : public Layer {
 public:
  explicit Flatten(FeatureShape in) { in_ = in; out_ = {int(in.size()), 1, 1}; }
  std::string describe() const override { return "flatten"; }
  bool is_view() const override { return true; }
  void forward(Backend&, int, const float*, float*) override {}
  void backward(Backend&, int, const float*, const float*, const float*, float*) override {}
};

}  // namespace pcnn
