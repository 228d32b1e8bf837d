// Host entry points of the standalone pooling kernels (the fused convolution kernels pool on
// their own; these serve layers that pool separately and the fallbacks).
#pragma once

#include "backends/cuda/cuda_context.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda {

// x (N,C,H,W) -> y (N,C,P,Q); overwrites y
void pool2d_forward(CudaContext& ctx, PoolKind kind, const Pool2dShape& s, const float* x,
                    float* y);
// x (N,C,H,W), dy (N,C,P,Q) -> dx (N,C,H,W); overwrites dx
void pool2d_backward(CudaContext& ctx, PoolKind kind, const Pool2dShape& s, const float* x,
                     const float* dy, float* dx);

}  // namespace pcnn::cuda
