// Activation loops over one contiguous span, with the activation fixed at compile time so that
// the switch inside core/activation_math.hpp folds away and the loop vectorises. Called by the
// element-wise kernels and by the fused conv / linear epilogues from their own threads.
#pragma once

#include <cstddef>
#include <type_traits>

#include "core/activation_math.hpp"

namespace pcnn::omp {

template <Activation A>
using ActTag = std::integral_constant<Activation, A>;

// Calls f(ActTag<act>{}) with act as a compile-time constant.
template <class F>
void with_activation(Activation act, F&& f) {
  switch (act) {
    case Activation::ReLU: f(ActTag<Activation::ReLU>{}); break;
    case Activation::Tanh: f(ActTag<Activation::Tanh>{}); break;
    case Activation::Sigmoid: f(ActTag<Activation::Sigmoid>{}); break;
    default: f(ActTag<Activation::None>{}); break;
  }
}

// y[i] = act(x[i] + bias) for i < n; x == y allowed (the conv epilogue runs it in place).
inline void bias_act_span(Activation act, size_t n, float bias, const float* x, float* y) {
  with_activation(act, [&](auto tag) {
    for (size_t i = 0; i < n; ++i) y[i] = activate(tag.value, x[i] + bias);
  });
}

// y[i] = act(x[i]); x == y allowed.
inline void act_forward_span(Activation act, size_t n, const float* x, float* y) {
  with_activation(act, [&](auto tag) {
    for (size_t i = 0; i < n; ++i) y[i] = activate(tag.value, x[i]);
  });
}

// dx[i] = dy[i] * act'(y[i]); dy == dx allowed.
inline void act_backward_span(Activation act, size_t n, const float* y, const float* dy,
                              float* dx) {
  with_activation(act, [&](auto tag) {
    for (size_t i = 0; i < n; ++i) dx[i] = dy[i] * activation_derivative(tag.value, y[i]);
  });
}

}  // namespace pcnn::omp
