// The strip kernels of the cuda convolution (5x5 filters at unit stride, 2x2 pooling fused), the
// part their forward (conv2d_forward_strip.cuh: any channel count) and weight gradient
// (conv2d_backward_strip.cu: one input channel, the first layer of a grey-image network) share:
// a thread owns KPT filters over a strip of WT pooled outputs of one pooled row, i.e. two conv
// rows of 2 * WT columns, and reads the 6 input rows of a channel they meet once each, from the
// block's images staged in shared memory, into registers. Why: notes/tuning-cuda.md,
// "Single-channel strips".
#pragma once

#include "backends/cuda/conv2d_common.cuh"
#include "backends/cuda/cuda_context.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda {

constexpr int kStripWT = 7;  // the weight gradient's pooled columns a thread: LeNet-5's 14 in two

// Whether a layer is one the strip forward is compiled for (any channel count).
inline bool strip_forward_holds(const Conv2dShape& s, const ConvEpilogue& epi) {
  return s.R == 5 && s.S == 5 && s.stride == 1 && epi.pool != PoolKind::None &&
         epi.pool_window == 2 && epi.pool_stride == 2 && s.P() % 2 == 0 && s.Q() % 2 == 0;
}
// ... and the strip weight gradient (one input channel).
inline bool strip_holds(const Conv2dShape& s, const ConvEpilogue& epi) {
  return s.C == 1 && strip_forward_holds(s, epi);
}

// The forward's strip width: 5 or 7 pooled columns, whichever leaves fewer idle in a row's last
// strip (7 on a tie): LeNet-5's conv1 (14 pooled columns) 7, its conv2 (5) 5.
inline int strip_width(const Conv2dShape& s) {
  const int q2 = s.Q() / 2;
  return (q2 + 4) / 5 * 5 < (q2 + 6) / 7 * 7 ? 5 : 7;
}

// Whether a strip launch of `items` threads fills four blocks of 128 on every multiprocessor,
// where Auto takes the strips (H100: LeNet-5's layers at batch 1024 they win, at 64 they lose;
// notes/tuning-cuda.md, "Single-channel strips").
inline bool strip_fills(const CudaContext& ctx, long long items) {
  return items >= 4LL * 128 * ctx.sm_count();
}

// Thread items of a strip launch per image and filter group: (pooled row, strip).
__host__ __device__ inline long long strip_items_per_plane(const Conv2dShape& s,
                                                           int wt = kStripWT) {
  return (long long)(s.P() / 2) * ((s.Q() / 2 + wt - 1) / wt);
}
// ... and of the whole launch: every image and group of kpt filters.
inline long long strip_items(const Conv2dShape& s, int kpt, int wt) {
  return (long long)s.N * ((s.K + kpt - 1) / kpt) * strip_items_per_plane(s, wt);
}

// Where a strip block keeps its images: in shared memory, every channel, each plane padded with
// zeros (the layer's padding, and the columns past the last strip) to `rows` x `cols`, its rows
// `stride` floats apart. Why: read through L1, a warp's lanes fell on rows 14-28 floats apart,
// about 14 sectors a load (H100, batch 1024: LeNet-5's conv1 forward 26.3 us where 8-12 were
// predicted). Here the stride is odd, so the rows two apart that neighbouring items read fall on
// different banks: a warp's row load costs 2 wavefronts at worst (LeNet-5's conv1). So is a
// plane's size (one row of zeros more than the H + 2 pad the items read): the lanes of a warp
// that reach the next image fall on other banks than those of the one before (ncu, H100, session
// 31: the weight gradient's loads, a plane of 32 x 33 floats, 2.8 wavefronts each).
struct StripStage {
  int rows, cols, stride, plane;
  __host__ __device__ StripStage(const Conv2dShape& s, int wt) {
    rows = s.P() + 5;  // H + 2 pad (P is even), and a row of zeros no item reads: odd
    cols = (s.Q() / 2 + wt - 1) / wt * 2 * wt + 4;
    stride = cols | 1;
    plane = rows * stride;
  }
};
// Images a block of `threads` consecutive items can meet, `per_image` items an image.
inline long long strip_stage_images(const Conv2dShape& s, long long per_image, int threads) {
  const long long imgs = (threads - 1 + per_image - 1) / per_image + 1;
  return imgs < s.N ? imgs : s.N;
}

// The 6 input rows of a staged channel plane xs that item (pooled row pp, strip) meets, each read
// once into XW = 2 * WT + 4 registers (rows of the layer's padding skipped, so the sums keep the
// Tiled kernel's order), then body(i, r, xr) for each of the item's two conv rows i that it
// meets, through filter row r.
template <int XW, class Body>
__device__ __forceinline__ void walk_strip_rows(const Conv2dShape& s, const StripStage& st,
                                                const float* xs, int pp, int strip, Body body) {
  const float* at = xs + 2 * pp * st.stride + strip * (XW - 4);
#pragma unroll
  for (int u = 0; u < 6; ++u) {
    const int h = 2 * pp - s.pad + u;
    if (h < 0 || h >= s.H) continue;
    float xr[XW];
#pragma unroll
    for (int j = 0; j < XW; ++j) xr[j] = at[u * st.stride + j];
#pragma unroll
    for (int i = 0; i < 2; ++i)
      if (u - i >= 0 && u - i <= 4) body(i, u - i, xr);
  }
}

// The weight gradient (dw and db; no dx: a first layer has none to pass on). Block (filter group,
// chunk of images): its threads' sums over their items, added up over the block in a fixed order,
// then the last block of a group adds the chunks' sums in chunk order, so a run's bits repeat.
struct StripDwPlan {
  bool ok = false;
  int kpt = 2, threads = 128, imgs = 1, chunks = 1, groups = 1;
};
// kpt, chunks, threads: 0 for the rule's (conv2d_backward_strip.cu).
StripDwPlan plan_dw_strip(const CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                          int kpt, int chunks, int threads);
void run_dw_strip(CudaContext& ctx, const StripDwPlan& p, const Conv2dShape& s,
                  const DactSource& d, const ActIn& x, float* dw, float* db);

}  // namespace pcnn::cuda
