// Launcher of the first-maximum pooling backward (the gather kernel behind
// CudaBackend::pool2d_backward), with the grid size left to the caller: cuda runs it as a
// grid-stride loop over a few blocks per multiprocessor, cudnn (for max pooling, where
// cudnnPoolingBackward would route ties to any maximum) with one thread per input element, the
// launch its step was measured with (bench/results/h200-2026-12-03/kernels.md).
#pragma once

#include "backends/cuda/cuda_context.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda {

// x (N,C,H,W), dy (N,C,P,Q) -> dx (N,C,H,W); overwrites dx. `blocks` of 256 threads, >= 1.
void pool2d_backward_gather(CudaContext& ctx, PoolKind kind, const Pool2dShape& s,
                            const float* x, const float* dy, float* dx, int blocks);
constexpr int kPoolBackwardThreads = 256;

}  // namespace pcnn::cuda
