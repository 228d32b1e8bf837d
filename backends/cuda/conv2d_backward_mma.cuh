// The tensor-core weight gradient of the 16-bit convolution backward (conv2d_backward_mma.cu):
// its plan and launcher, called by conv2d_backward.cu's Mma variant.
#pragma once

#include "backends/cuda/act_io.cuh"
#include "backends/cuda/conv2d.cuh"
#include "backends/cuda/conv2d_common.cuh"
#include "backends/cuda/cuda_context.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda {

struct DwMmaPlan {
  bool ok = false;
  int mt = 1;      // m16 tiles of filters (K <= 16 * mt)
  int ntw = 1;     // n8 tiles of taps a warp (at most)
  int chunks = 1;  // blocks, each a chunk of images
  int imgs = 1;    // images a chunk
  int smem_bytes = 0;
};

// Whether and how the tensor-core kernel takes the weight gradient of s (any stride and
// padding; up to 64 filters and 8 * 8 * 4 taps plus the bias; one image's operands in 48 KB).
DwMmaPlan plan_dw_mma(CudaContext& ctx, const Conv2dShape& s, const ConvBackwardPlan& plan);

// dw (K,C,R,S) and db (K) (each may be nullptr) from 16-bit x and the d(pre-activation) d gives:
// the chunks' partial sums, then their sum in chunk order (a second launch): the same bits every
// run.
void run_dw_mma(CudaContext& ctx, const DwMmaPlan& p, const Conv2dShape& s, const DactSource& d,
                const ActIn& x, float* dw, float* db);

// The data gradient on tensor cores, for unit-stride layers with square filters (dx_as_forward_ok
// in conv_mma_layout.hpp): the forward kernel's block over the padded d(pre-activation) and the
// flipped, transposed filters. ok false: Split's data-gradient kernel takes it.
struct DxMmaPlan {
  bool ok = false;
  int nt = 1;      // n8 tiles of channels a block (1, 2 or 4)
  int ctiles = 1;  // blocks an image
  int smem_bytes = 0;
};
DxMmaPlan plan_dx_mma(const Conv2dShape& s);
void run_dx_mma(CudaContext& ctx, const DxMmaPlan& p, const Conv2dShape& s, const DactSource& d,
                const float* w, const ActOut& dx);

}  // namespace pcnn::cuda
