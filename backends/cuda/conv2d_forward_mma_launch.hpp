// The launcher of the tensor-core convolution forward (conv2d_forward_mma.cu), apart from its
// kernel (conv2d_forward_mma.cuh): conv2d_forward.cu calls it without compiling that kernel, so
// the module an fp32 run loads holds no tensor-core code (the driver loads a run's modules
// whole on first use; notes/tuning-cuda.md, session 20).
#pragma once

#include <cstdint>

#include "backends/cuda/conv2d_forward_out.cuh"
#include "backends/cuda/cuda_context.hpp"
#include "core/precision.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda {

// y = the fused forward of 16-bit x (format p) on nt n8 tiles of filters a block (1, 2 or 4),
// pw the fused pooling window (1 or 2), ktiles blocks an image, smem_floats of shared memory.
void launch_conv2d_forward_mma(CudaContext& ctx, int nt, int pw, int ktiles, int smem_floats,
                               const Conv2dShape& s, Precision p, const uint16_t* x,
                               const float* w, const FwdOut& o);

}  // namespace pcnn::cuda
