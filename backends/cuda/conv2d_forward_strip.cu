// The strip forward's launches (conv2d_forward_strip.cuh), a module of their own: conv2d_forward.cu
// picks the strip (choose_strip, auto_takes_strip) and calls launch_conv2d_forward_strip, so the
// runs that never take it do not load these kernels (conv2d_forward_strip_launch.hpp).
#include "backends/cuda/conv2d_forward_strip.cuh"
#include "backends/cuda/conv2d_forward_strip_launch.hpp"

namespace pcnn::cuda {

namespace {

template <int WT, bool ONE>
void launch_strip_wt(CudaContext& ctx, int kpt, int smem_floats, const Conv2dShape& s,
                     const ActIn& x, const float* w, const FwdOut& o, int blocks, int threads) {
  const size_t smem = size_t(smem_floats) * sizeof(float);
  const bool coalesce = ctx.strip_store() && strip_can_coalesce(s, kpt, WT, o);
  // One filter on one channel a thread is compiled for 8 blocks a multiprocessor (64 registers
  // where it took 96, no spills; its launch at batch 1024 is 2 waves of 5 blocks plus a sliver).
  // Conv lab, H100, session 32, LeNet-5 at 1024 with the coalesced stores: conv1 20.6 -> 19.5
  // us; conv2 (six channels, 80 -> 64 registers) went 24.3 -> 25.8, so the others keep theirs.
  constexpr int min_blocks = ONE ? 8 : 1;
  if (kpt == 1)
    launch(ctx, "conv2d_forward_kernel_strip", conv2d_forward_kernel_strip<1, WT, ONE, min_blocks>,
           blocks, threads, smem, s, x, w, o, coalesce);
  else if (kpt == 2)
    launch(ctx, "conv2d_forward_kernel_strip", conv2d_forward_kernel_strip<2, WT, ONE>, blocks,
           threads, smem, s, x, w, o, false);
  else if (kpt == 3)
    launch(ctx, "conv2d_forward_kernel_strip", conv2d_forward_kernel_strip<3, WT, ONE>, blocks,
           threads, smem, s, x, w, o, false);
  else
    launch(ctx, "conv2d_forward_kernel_strip", conv2d_forward_kernel_strip<4, WT, ONE>, blocks,
           threads, smem, s, x, w, o, false);
}

}  // namespace

long long conv2d_forward_strip_floats(const Conv2dShape& s, int kpt) {
  const int wt = strip_width(s);
  return StripLayout(s, kpt, wt).with_images(s, wt);
}

// Blocks of 128 threads, or 64 where that leaves fewer than two blocks a multiprocessor.
void launch_conv2d_forward_strip(CudaContext& ctx, int kpt, int smem_floats, const Conv2dShape& s,
                                 const ActIn& x, const float* w, const FwdOut& o) {
  const int wt = strip_width(s);
  const long long items = strip_items(s, kpt, wt);
  const int threads = items >= 2LL * 128 * ctx.sm_count() ? 128 : 64;
  const long long want = (items + threads - 1) / threads;
  const int blocks = int(want < (1LL << 30) ? want : (1LL << 30));
  if (wt == 5) launch_strip_wt<5, false>(ctx, kpt, smem_floats, s, x, w, o, blocks, threads);
  else if (s.C == 1) launch_strip_wt<7, true>(ctx, kpt, smem_floats, s, x, w, o, blocks, threads);
  else launch_strip_wt<7, false>(ctx, kpt, smem_floats, s, x, w, o, blocks, threads);
}

}  // namespace pcnn::cuda
