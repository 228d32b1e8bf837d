// The activation functions and their derivatives for every backend's kernels, generated from the
// table in vocabulary.hpp. The derivative takes the forward *output* y, so backward never needs
// the pre-activation. activate<A> is for kernels templated through dispatch_activation; the
// run-time forms are for kernels that carry the activation as a value.
#pragma once

#include <cmath>

#include "core/host_device.hpp"
#include "core/vocabulary.hpp"

namespace pcnn {

template <Activation A>
PCNN_HD inline float activate(float x) {
  (void)x;
#define PCNN_ACT_ROW(e, name, desc, init, f, df) \
  if constexpr (A == Activation::e) return f;
  PCNN_ACTIVATIONS(PCNN_ACT_ROW)
#undef PCNN_ACT_ROW
  return x;
}

template <Activation A>
PCNN_HD inline float activation_derivative(float y) {
  (void)y;
#define PCNN_ACT_ROW(e, name, desc, init, f, df) \
  if constexpr (A == Activation::e) return df;
  PCNN_ACTIVATIONS(PCNN_ACT_ROW)
#undef PCNN_ACT_ROW
  return 1.f;
}

PCNN_HD inline float activate(Activation act, float x) {
  switch (act) {
#define PCNN_ACT_ROW(e, name, desc, init, f, df) \
  case Activation::e: return f;
    PCNN_ACTIVATIONS(PCNN_ACT_ROW)
#undef PCNN_ACT_ROW
  }
  return x;
}

PCNN_HD inline float activation_derivative(Activation act, float y) {
  switch (act) {
#define PCNN_ACT_ROW(e, name, desc, init, f, df) \
  case Activation::e: return df;
    PCNN_ACTIVATIONS(PCNN_ACT_ROW)
#undef PCNN_ACT_ROW
  }
  return 1.f;
}

}  // namespace pcnn
