// The tensor-core convolution forward's launches (the kernel: conv2d_forward_mma.cuh), one
// instantiation per n8 tiles a block, pooling window and 16-bit format.
#include "backends/cuda/common.cuh"
#include "backends/cuda/conv2d_forward_mma.cuh"
#include "backends/cuda/conv2d_forward_mma_launch.hpp"
#include "backends/cuda/conv_mma_layout.hpp"
#include "backends/cuda/launch.cuh"

namespace pcnn::cuda {

namespace {

template <int NT, int PW>
void launch_as(CudaContext& ctx, int ktiles, int smem_floats, const Conv2dShape& s, Precision p,
               const uint16_t* x, const float* w, const FwdOut& o) {
  const int mtiles = ceil_div(mma::mma_rows(s, PW), 16);
  const int threads = 32 * (mtiles < kConvMmaThreads / 32 ? mtiles : kConvMmaThreads / 32);
  const size_t smem = size_t(smem_floats) * sizeof(float);
  if (p == Precision::F16)
    launch(ctx, "conv2d_forward_kernel_mma", conv2d_forward_kernel_mma<NT, PW, true>,
           s.N * ktiles, threads, smem, s, x, w, o, ktiles);
  else
    launch(ctx, "conv2d_forward_kernel_mma", conv2d_forward_kernel_mma<NT, PW, false>,
           s.N * ktiles, threads, smem, s, x, w, o, ktiles);
}

template <int NT>
void launch_pw(CudaContext& ctx, int pw, int ktiles, int smem_floats, const Conv2dShape& s,
               Precision p, const uint16_t* x, const float* w, const FwdOut& o) {
  if (pw == 2) launch_as<NT, 2>(ctx, ktiles, smem_floats, s, p, x, w, o);
  else launch_as<NT, 1>(ctx, ktiles, smem_floats, s, p, x, w, o);
}

}  // namespace

void launch_conv2d_forward_mma(CudaContext& ctx, int nt, int pw, int ktiles, int smem_floats,
                               const Conv2dShape& s, Precision p, const uint16_t* x,
                               const float* w, const FwdOut& o) {
  if (nt == 4) launch_pw<4>(ctx, pw, ktiles, smem_floats, s, p, x, w, o);
  else if (nt == 2) launch_pw<2>(ctx, pw, ktiles, smem_floats, s, p, x, w, o);
  else launch_pw<1>(ctx, pw, ktiles, smem_floats, s, p, x, w, o);
}

}  // namespace pcnn::cuda
