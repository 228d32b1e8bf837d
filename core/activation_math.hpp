// The activation functions and their derivatives, written once for every backend's kernels.
// The derivative takes the forward *output* y, so backward never needs the pre-activation.
#pragma once

#include <cmath>

#include "core/host_device.hpp"
#include "core/shapes.hpp"

namespace pcnn {

PCNN_HD inline float activate(Activation act, float x) {
  switch (act) {
    case Activation::ReLU: return x > 0.f ? x : 0.f;
    case Activation::Tanh: return tanhf(x);
    case Activation::Sigmoid: return 1.f / (1.f + expf(-x));
    default: return x;
  }
}

PCNN_HD inline float activation_derivative(Activation act, float y) {
  switch (act) {
    case Activation::ReLU: return y > 0.f ? 1.f : 0.f;
    case Activation::Tanh: return 1.f - y * y;
    case Activation::Sigmoid: return y * (1.f - y);
    default: return 1.f;
  }
}

}  // namespace pcnn
