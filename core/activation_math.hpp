// The activation functions and their derivatives for every backend's kernels, generated from the
// table in vocabulary.hpp. The derivative takes the forward *output* y, so backward never needs
// the pre-activation. activate<A> is for kernels templated through dispatch_activation; the
// run-time forms are for kernels that carry the activation as a value.
#pragma once

#include <cmath>
#include <cstddef>

#include "core/host_device.hpp"
#include "core/vocabulary.hpp"

namespace pcnn {

// One column of the table's row A: f of the input (Derivative false) or df of the output
// (Derivative true). The table's expressions name the input x and the output y.
template <Activation A, bool Derivative>
PCNN_HD inline float activation_table(float v) {
  const float x = v, y = v;
  (void)x, (void)y;
#define PCNN_ACT_ROW(e, name, desc, init, f, df) \
  if constexpr (A == Activation::e) {            \
    if constexpr (Derivative) return df;         \
    else return f;                               \
  }
  PCNN_ACTIVATIONS(PCNN_ACT_ROW)
#undef PCNN_ACT_ROW
  return Derivative ? 1.f : v;
}

// The same for an activation known at run time.
template <bool Derivative>
PCNN_HD inline float activation_table(Activation act, float v) {
  switch (act) {
#define PCNN_ACT_ROW(e, name, desc, init, f, df) \
  case Activation::e: return activation_table<Activation::e, Derivative>(v);
    PCNN_ACTIVATIONS(PCNN_ACT_ROW)
#undef PCNN_ACT_ROW
  }
  return Derivative ? 1.f : v;
}

template <Activation A>
PCNN_HD inline float activate(float x) { return activation_table<A, false>(x); }
template <Activation A>
PCNN_HD inline float activation_derivative(float y) { return activation_table<A, true>(y); }

PCNN_HD inline float activate(Activation act, float x) { return activation_table<false>(act, x); }
PCNN_HD inline float activation_derivative(Activation act, float y) {
  return activation_table<true>(act, y);
}

// The gradient dy[i] carries back through the activation: dy[i] * act'(y[i]), the derivative from
// the output y (y is not read for None, and may then be nullptr).
PCNN_HD inline float activation_grad(Activation act, const float* dy, const float* y, size_t i) {
  return act == Activation::None ? dy[i] : dy[i] * activation_derivative(act, y[i]);
}

}  // namespace pcnn
