// Kokkos pooling kernels as free functions, so the fused convolution backward can route its
// gradient through max-pool and the activation derivative in one pass.
#pragma once

#include "core/shapes.hpp"

namespace pcnn {
namespace kk {

// x (N,C,H,W) -> y (N,C,P,Q); overwrites y.
void pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x, float* y);

// x, dy (N,C,P,Q) -> dx (N,C,H,W) = pool'(dy) * act'(x); overwrites dx. act == None: plain
// pooling gradient. x is the pooling's input (the activation's output when fused).
void pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x, const float* dy,
                     Activation act, float* dx);

}  // namespace kk
}  // namespace pcnn
