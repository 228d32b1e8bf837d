// Dense (fully connected) with an optional fused activation: y = act(x w^T + b), w (out, in).
#pragma once

#include "backends/device_array.hpp"
#include "layers/layer.hpp"

namespace pcnn {

class Dense : public WeightedLayer {
 public:
  Dense(FeatureShape in, int units, Activation act, InitKind init);
  std::string describe() const override;
  void setup(Backend& be, int max_batch) override;
  size_t kept_floats_per_sample() const override;
  void forward(Backend& be, int N, const float* x, float* y) override;
  void backward(Backend& be, int N, const float* x, const float* y, const float* dy,
                float* dx) override;
  double forward_flops(int N) const override { return 2.0 * N * double(in_.size()) * units(); }

 private:
  Activation act_;
  DeviceArray<float> scratch_;  // d(pre-activation)
};

}  // namespace pcnn
