// Stand-alone activation layers' descriptions.
#include "layers/activation.hpp"

#include "core/vocabulary.hpp"

namespace pcnn {

std::string ActivationLayer::describe() const { return activation_name(act_); }

}  // namespace pcnn
