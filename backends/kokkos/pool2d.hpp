// Kokkos pooling kernels as free functions, so the fused convolution can pool with indices and
// route its gradient through the pooling and the activation derivative in one pass.
#pragma once

#include <cstdint>

#include "core/shapes.hpp"

namespace pcnn {
namespace kk {

// x (N,C,H,W) -> y (N,C,P,Q); overwrites y, and argmax (N,C,P,Q) for max unless nullptr.
void pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x, float* y, uint8_t* argmax);

// Max pooling's gradient from its kept indices through act (the backend op of that name).
void max_pool_backward_argmax(const Pool2dShape& s, Activation act, const uint8_t* argmax,
                              const float* y, const float* dy, float* dx);

// x, dy (N,C,P,Q) -> dx (N,C,H,W) = pool'(dy) * act'(x); overwrites dx. act == None: plain
// pooling gradient. x is the pooling's input (the activation's output when fused).
void pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x, const float* dy,
                     Activation act, float* dx);

}  // namespace kk
}  // namespace pcnn
