// Activation loops over one contiguous span, with the activation fixed at compile time (through
// dispatch_activation, core/vocabulary.hpp) so that each loop is specialised and vectorises.
// Called by the element-wise kernels and by the fused conv / linear epilogues from their own
// threads.
#pragma once

#include <cstddef>

#include "core/activation_math.hpp"

namespace pcnn::omp {

// y[i] = act(x[i] + bias) for i < n; x == y allowed (the conv epilogue runs it in place).
inline void bias_act_span(Activation act, size_t n, float bias, const float* x, float* y) {
  dispatch_activation(act, [&](auto tag) {
    constexpr Activation A = decltype(tag)::value;
    for (size_t i = 0; i < n; ++i) y[i] = activate<A>(x[i] + bias);
  });
}

// y[i] = act(x[i]); x == y allowed.
inline void act_forward_span(Activation act, size_t n, const float* x, float* y) {
  dispatch_activation(act, [&](auto tag) {
    constexpr Activation A = decltype(tag)::value;
    for (size_t i = 0; i < n; ++i) y[i] = activate<A>(x[i]);
  });
}

// dx[i] = dy[i] * act'(y[i]); dy == dx allowed.
inline void act_backward_span(Activation act, size_t n, const float* y, const float* dy,
                              float* dx) {
  dispatch_activation(act, [&](auto tag) {
    constexpr Activation A = decltype(tag)::value;
    for (size_t i = 0; i < n; ++i) dx[i] = dy[i] * activation_derivative<A>(y[i]);
  });
}

}  // namespace pcnn::omp
