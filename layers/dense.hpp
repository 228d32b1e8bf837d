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
  PCNN_LAYER_PASSES
  double forward_flops(int N) const override { return 2.0 * N * double(in_.size()) * units(); }

 private:
  Activation act_;
  DeviceArray<float> scratch_;  // d(pre-activation)
};

}  // namespace pcnn
