// Names of activations and pooling kinds, as written in model specs and layer descriptions.
#pragma once

#include <string>

#include "core/shapes.hpp"

namespace pcnn {

const char* activation_name(Activation a);
const char* pool_name(PoolKind p);
// Parses "relu", "tanh", "sigmoid", "none"; throws Error otherwise.
Activation parse_activation(const std::string& s);

}  // namespace pcnn
