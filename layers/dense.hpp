// Dense (fully connected) with an optional fused activation: y = act(x w^T + b), w (out, in).
#pragma once

#include "layers/layer.hpp"

namespace pcnn {

class Dense : public WeightedLayer {
 public:
  Dense(FeatureShape in, int units, Activation act, InitKind init);
  std::string describe() const override;
  size_t workspace_floats_per_sample() const override;
  PCNN_LAYER_PASSES
  PCNN_LAYER_PASSES_16
  size_t staging_floats_per_sample(const Staging16& st) const override {
    return st.dense ? Layer::staging_floats_per_sample(st) : 0;
  }
  double forward_flops(int N) const override { return 2.0 * N * double(in_.size()) * units(); }

 private:
  Activation act_;
};

}  // namespace pcnn
