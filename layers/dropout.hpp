// Inverted dropout (Srivastava et al. 2014): while training, each element is kept with
// probability 1 - rate and scaled by 1 / (1 - rate); in inference it is the identity. The mask is
// a hash of (the pass's seed, this layer's salt, the step on the device, the element index), so
// it is the same on every backend, the backward draws it again, and nothing is kept.
#pragma once

#include "layers/layer.hpp"

namespace pcnn {

class Dropout : public Layer {
 public:
  // salt: which dropout layer of the model this is (0, 1, ...), so two layers drop differently.
  Dropout(FeatureShape in, float rate, uint32_t salt);
  std::string describe() const override;
  void forward(Backend& be, int N, const float* x, float* y) override;
  void backward(Backend& be, int N, const float* x, const float* y, const float* dy,
                float* dx) override;
  double forward_flops(int N) const override { return double(N) * in_.size(); }
  double backward_flops(int N) const override { return forward_flops(N); }

 private:
  float rate_;
  uint32_t salt_;
};

}  // namespace pcnn
