// The model summary pcnn train prints before training: each layer as built (after fusion), its
// output shape per image and its parameter count, and the totals.
#pragma once

#include <string>

#include "models/model.hpp"

namespace pcnn::cli {

// Lines ending in '\n'.
std::string model_summary(const Model& model);

}  // namespace pcnn::cli
