// The strip forward's launcher and shared-memory size (conv2d_forward_strip.cu), apart from its
// kernel (conv2d_forward_strip.cuh): conv2d_forward.cu calls them without compiling that kernel,
// so a run that never takes a strip loads none of its code. Its twelve instantiations made the
// forward's module 5.4 times as large (sm_90 cubin 1.5 -> 8.3 MB, sessions 29-32), and the driver
// loads a module whole on its first kernel (notes/tuning-cuda.md, session 33).
#pragma once

#include "backends/cuda/act_io.cuh"
#include "backends/cuda/conv2d_forward_out.cuh"
#include "backends/cuda/cuda_context.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda {

// Shared memory of a strip block with kpt filters a thread (its filters, outputs and images).
long long conv2d_forward_strip_floats(const Conv2dShape& s, int kpt);

// y = the fused strip forward of x (fp32 or 16-bit), kpt filters a thread, smem_floats of shared
// memory a block (conv2d_forward_strip_floats).
void launch_conv2d_forward_strip(CudaContext& ctx, int kpt, int smem_floats, const Conv2dShape& s,
                                 const ActIn& x, const float* w, const FwdOut& o);

}  // namespace pcnn::cuda
