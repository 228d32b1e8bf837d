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
  PCNN_LAYER_PASSES
  PCNN_PER_ELEMENT_FLOPS

 private:
  float rate_;
  uint32_t salt_;
};

}  // namespace pcnn
