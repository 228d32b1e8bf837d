// The built-in models' JSON text, compiled in from models/builtin/NAME.json by
// cmake/PcnnBuiltinModels.cmake; builtin_model() (models/model_spec.hpp) parses it.
#pragma once

#include <vector>

namespace pcnn {

struct BuiltinModelText {
  const char* name;  // the file's stem, as --model takes it
  const char* json;  // the file's bytes
};

// In the order of PCNN_BUILTIN_MODELS (cmake/PcnnBuiltinModels.cmake).
const std::vector<BuiltinModelText>& builtin_model_texts();

}  // namespace pcnn
