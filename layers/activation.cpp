// Stand-alone activation layers' descriptions.
#include "layers/activation.hpp"

#include "layers/describe.hpp"

namespace pcnn {

std::string ActivationLayer::describe() const { return activation_name(act_); }

}  // namespace pcnn
