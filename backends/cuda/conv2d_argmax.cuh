// The weight gradient of a one-channel, max-pooled first layer read off the kept maxima
// (conv2d_backward_argmax.cu): under max pooling only each window's kept maximum has a gradient,
// so its sums visit one conv output a window (a quarter of them under 2 x 2 pooling) where the
// strip and Tiled kernels multiply the other three by zero. Why: notes/tuning-cuda.md, "The
// first layer's weight gradient from the kept maxima".
#pragma once

#include "backends/cuda/conv2d_common.cuh"
#include "backends/cuda/cuda_context.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda {

// Block: a chunk of images, staged whole in shared memory; warp w: filters w, w + warps, ...
struct ArgmaxDwPlan {
  bool ok = false;
  int taps = 0;  // the filter's side: 3 or 5 (the kernels compiled)
  int warps = 1, imgs = 1, chunks = 1;
};
// chunks: 0 for the rule's (about four blocks a multiprocessor).
ArgmaxDwPlan plan_dw_argmax(const CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                            int chunks);
void run_dw_argmax(CudaContext& ctx, const ArgmaxDwPlan& p, const Conv2dShape& s,
                   const DactSource& d, const ActIn& x, float* dw, float* db);

}  // namespace pcnn::cuda
