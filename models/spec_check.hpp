// The checked geometry of a model spec: every layer's output shape and parameter tensors,
// computed in 64-bit arithmetic with overflow-safe products. Every way a spec can be impossible
// (a count or size < 1, a kernel or window larger than its input, a product past 2^31-1, an
// unknown word) is refused here, naming the layer and the key, before a layer is built or a
// backend sees a shape: no spec can reach a kernel with a zero stride or a wrapped size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_spec.hpp"

namespace pcnn {

struct LayerGeometry {
  int64_t c = 1, h = 1, w = 1;  // the layer's output, per sample
  int64_t largest = 0;          // its largest per-sample buffer (a fused conv's pre-pool output)
  // Parameter tensors in the model's arena order: conv weight (K,C,R,S) then bias (K); dense
  // weight (units, inputs) then bias (units). Empty for layers without parameters.
  std::vector<std::vector<int64_t>> params;
  // Non-trained state tensors in the model's state arena: batchnorm running mean (C) then
  // running variance (C). Empty for layers without state.
  std::vector<std::vector<int64_t>> state;
};

struct SpecGeometry {
  std::vector<LayerGeometry> layers;
  uint64_t param_count = 0;
  uint64_t state_count = 0;
  int64_t largest = 0;  // the largest per-sample buffer of any layer
};

// Throws Error such as "layer 3 (conv): 'kernel' 7 does not fit its padded input 6x6".
SpecGeometry check_spec(const ModelSpec& spec);

}  // namespace pcnn
