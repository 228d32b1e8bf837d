// A model as data: its input and a list of layer specs. The built-in models (lenet5, simard2003,
// mlp, fast3x3) are specs too, and any spec can be written to / read from JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/vocabulary.hpp"

namespace pcnn {

struct LayerSpec {
  // conv, maxpool, avgpool, dense, relu, tanh, sigmoid, flatten, batchnorm, dropout, globalavgpool
  std::string type;
  int units = 0;    // conv: output maps; dense: output units
  int kernel = 0;   // conv: kernel size; pools: window
  int stride = 1;   // conv and pools (pools default to their window)
  int pad = 0;      // conv and pools (a pool's padding is never read: core/pool_math.hpp)
  std::string act = "none";   // fused activation (set by fuse(), or written by hand)
  std::string pool = "none";  // conv only: fused pooling
  int pool_window = 2, pool_stride = 2;
  float eps = 1e-5f, momentum = 0.1f;  // batchnorm: variance floor; running-statistics rate
  double rate = 0.5;  // dropout: the probability of dropping an element, in [0, 1)
};

struct ModelSpec {
  std::string name;
  int in_c = 1, in_h = 28, in_w = 28;
  int classes = 10;
  std::vector<LayerSpec> layers;  // ends in a dense layer of `classes` units (the logits)
};

// Built-in models by name; throws Error for an unknown name (listing the known ones).
ModelSpec builtin_model(const std::string& name);
std::vector<std::string> builtin_model_names();

// Folds activation and pooling layers into the conv / dense layer before them (and an activation
// into a batchnorm before it), so backends can run them as one fused kernel. Numerically the same model. With `first`, also says where each
// fused layer starts in spec.layers (it runs up to where the next one starts).
ModelSpec fuse(const ModelSpec& spec, std::vector<size_t>* first = nullptr);

// A built-in model name, or a path ending in .json to a spec file (what --model takes).
ModelSpec load_model_spec(const std::string& name_or_path);

// The JSON form of a spec (models/model_spec_json.cpp): to_json writes a key only where it differs
// from the reader's default for that layer type, so from_json(to_json(s)) is s.
nlohmann::json to_json(const ModelSpec& spec);
// The keys a spec takes at its top level, and those a layer of each kind takes besides "type"
// (docs/model-format.md documents each; a test keeps the two in step).
const std::vector<std::string>& spec_keys();
const std::vector<std::string>& layer_keys(LayerKind kind);
// Strict: unknown keys, missing required keys, non-integers (2.5, 1e300), numbers outside int
// and impossible values (check_spec) are refused with the layer index and the key.
ModelSpec model_spec_from_json(const nlohmann::json& j);

}  // namespace pcnn
