// Names of activations and pooling kinds.
#include "layers/describe.hpp"

#include "core/check.hpp"

namespace pcnn {

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::ReLU: return "relu";
    case Activation::Tanh: return "tanh";
    case Activation::Sigmoid: return "sigmoid";
    default: return "none";
  }
}

const char* pool_name(PoolKind p) {
  switch (p) {
    case PoolKind::Max: return "maxpool";
    case PoolKind::Avg: return "avgpool";
    default: return "none";
  }
}

Activation parse_activation(const std::string& s) {
  if (s == "relu") return Activation::ReLU;
  if (s == "tanh") return Activation::Tanh;
  if (s == "sigmoid") return Activation::Sigmoid;
  if (s == "none" || s.empty()) return Activation::None;
  throw Error("unknown activation '" + s + "' (relu, tanh, sigmoid, none)");
}

}  // namespace pcnn
