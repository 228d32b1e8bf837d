// The Tiled and Split variants of the cuda convolution backward, the shared part: block
// layouts, the launch arguments and plan, and the launchers, whose kernels are compiled in
// several files side by side (conv2d_backward_tiled_kt*.cu, one per group of filter tiles,
// and conv2d_backward_tiled_dx.cu): in one file they took the compiler seven minutes.
// The planning and the variant choice are in conv2d_backward.cu.
#pragma once

#include <cstdint>

#include "backends/cuda/conv2d_common.cuh"
#include "backends/cuda/cuda_context.hpp"
#include "backends/cuda/launch.cuh"
#include "core/shapes.hpp"

namespace pcnn::cuda::tiled {

constexpr int kMaxSmemFloats = kDefaultSmemBytes / 4;  // the default, no opt-in (launch.cuh)
// What a data-gradient block may opt in to when its d(act_out) staging alone outgrows the
// default (32 filters of 10x10 outputs with the strip path's halo: 58 KB): launch.cuh's
// kOptInSmemBytes; the fused kernel runs one a SM anyway.
constexpr int kMaxOptInSmemFloats = kOptInSmemBytes / 4;
constexpr int kDxStrip = 7;  // dx outputs along w per thread (strip path): 14-wide rows = 2 strips
// 512 threads, 1 block/SM minimum: ptxas (CUDA 13) then allows 128 registers, and the
// register tiles of these kernels do not spill (it did with a bare 1024 or 512 bound).
constexpr int kMaxThreads = 512;
constexpr int kDwKTiles[] = {1, 2, 4, 6, 8, 16};  // instantiated filter tiles of the dw blocks
// The split data-gradient kernel: at most 256 threads and at least 4 blocks a multiprocessor
// (ptxas then allows 64 registers; the kernels use 56-63, with no spills).
constexpr int kDxThreads = 256;
constexpr int kDxMinBlocks = 4;
// Most chunk sums one last block may have to add up, per 1024 images of the batch (at least this
// many): the tail may grow with the work each chunk does. Session 13 (H200, same-run bench): a
// fixed 32768 held the filter tiles of LeNet-5's and Simard 2003's conv2 at batch 1024 to 6 and
// 8, four times that gave 8 and 16 and steps 6 and 13 % faster, but at batch 64 single-image
// chunks 6 % slower, so the limit became 32768 per 256 images. Since the sums have 32 loads in
// flight (sum_rows), single-image chunks pay at batch 64 too (kernel lab, H100, session 26:
// LeNet-5's conv2 at 64, 4 filters a block, 64 chunks 20.3 us against 32 chunks 23.5;
// fast3x3's second layer at 128, 8 filters, 64 chunks 64.6 us against 26 chunks 85.0).
constexpr int kMaxTailFloats = 131072;
constexpr int kMaxTailFloatsBefore = 32768;  // per 256 images: PCNN_CONV_DW_BLOCKS=0

// Square 3x3 and 5x5 filters at unit stride are compile-time constants of the kernels (RS): a
// weight-gradient thread then owns a whole filter row of taps and a data-gradient thread a strip
// of outputs (H200, the kernel lab: 1.6x faster for 3x3 16 -> 32, 1.9x for LeNet-5's conv2,
// than the kernels for any size). Not at stride 2, where they were 5 % slower (Simard 2003's
// conv2), nor past a padding of R - 1, where the strips' halo would be negative.
__host__ __device__ inline int row_taps(const Conv2dShape& s) {
  if (s.R != s.S || s.stride != 1 || s.pad >= s.R) return 1;
  return s.S == 3 || s.S == 5 ? s.S : 1;
}

// Weight-gradient block: a group of staged images and their d(act_out). A thread item is one
// filter row (c, r) with all its TS taps (TS = S when the filter size is a compile-time
// constant: one x read then feeds KT*TS multiply-adds, sliding along q), or one tap (TS = 1).
struct DwLayout {
  int Hp, Wp, x_img, d_img, group, items, parts, red_floats, total;
  __host__ __device__ DwLayout(const Conv2dShape& s, int kt, int ts, int threads, int imgs) {
    Hp = s.H + 2 * s.pad;
    Wp = s.W + 2 * s.pad;
    x_img = s.C * Hp * Wp;
    d_img = kt * s.P() * s.Q();
    // As many images as fit are staged in one go: one memory latency per group, not per image.
    group = kMaxSmemFloats / (x_img + d_img);
    group = group > imgs ? imgs : (group < 1 ? 1 : group);
    items = s.C * s.R * (s.S / ts) + 1;  // filter rows (or taps), plus the bias
    parts = threads / items;
    red_floats = parts * items * kt * ts;
    const int staged = group * (x_img + d_img);
    total = staged > red_floats ? staged : red_floats;
  }
};

// Data-gradient block: d(act_out) of all K filters, then the filters of the channel tile. The
// strip path (unit stride, a filter size the kernel is compiled for: row_taps) reads d(act_out)
// through a zero halo of (R-1-pad, S-1-pad), the outputs a dx row reaches beyond the plane, plus a
// few columns of slack, so it needs no bounds checks; the general path checks bounds itself and
// stages d(act_out) without a halo (stride 2 layers would otherwise waste most of the space).
// A block of the two-row strip path may take several images (FusedArgs::dx_imgs): their
// d(act_out) one after another (d_floats each), then the filters they share.
struct DxLayout {
  int hr, hs, Ph, Qh, d_floats, w_floats, total;
  __host__ __device__ DxLayout(const Conv2dShape& s, int ct, bool strip, int imgs = 1) {
    hr = strip ? s.R - 1 - s.pad : 0;
    hs = strip ? s.S - 1 - s.pad : 0;
    Ph = s.P() + 2 * hr;
    Qh = s.Q() + 2 * hs + (strip ? kDxStrip : 0);  // slack: a strip's last segment stays in its row
    d_floats = s.K * Ph * Qh;
    w_floats = s.K * ct * s.R * s.S;
    total = imgs * d_floats + w_floats;
  }
};

// Split's data gradient one image a lane, for strided layers with few channels
// (conv2d_backward_lanes.cu). At stride st the dx outputs of one column class (w + pad) mod st
// meet only the taps t = class, class + st, ...: within a class dx is a unit-stride sum over a
// sub-filter. A warp owns one item, kLanesCt channels x a strip of JW outputs of one class in one
// row h, for 32 images, one a lane: every lane reads the same filter value (a broadcast), its
// own image's d(act_out) row segment from registers, and the row taps are a loop over the valid
// ones only. Blocks: 32 images x a channel tile x a group of items, one warp an item; the
// filters are staged kc at a time with d(act_out) as [filter][p][q][image], an image a bank.
constexpr int kLanesImages = 32;     // images a block (one a lane)
constexpr int kLanesCt = 5;          // channels a thread (Simard 2003's conv2 has 5)
constexpr int kLanesS = 5;           // the filter width the kernel is compiled for
constexpr int kLanesStride = 2;      // and the stride
constexpr int kLanesMaxWarps = 8;    // items a block at most
constexpr int kLanesMaxSplit = 2;    // warps an item at most (each with part of the filters)
constexpr int kLanesPitch = kLanesImages + 1;  // a staged (filter, p, q) row: 32 images + 1
constexpr int kLanesKt = 5;          // filters a weight-gradient block
constexpr int kLanesDwMaxWarps = 8;  // filter rows a weight-gradient block (a warp each)
// A weight-gradient block's shared memory: one input plane and kLanesKt filters' d(act_out), of
// 32 images each; and the chunk sums it leaves.
__host__ __device__ inline int lanes_dw_floats(const Conv2dShape& s) {
  return (s.H * s.W + kLanesKt * s.P() * s.Q()) * kLanesPitch;
}
// One chunk's sums: dw (K x C x R x S), then db (K).
__host__ __device__ inline size_t lanes_dw_per_chunk(const Conv2dShape& s) {
  return size_t(s.K) * s.C * s.R * s.S + s.K;
}
inline size_t lanes_dw_partial(const Conv2dShape& s, int chunks) {
  return size_t(chunks) * lanes_dw_per_chunk(s);
}
struct DxLanesLayout {
  int strips = 0, items = 0, d_floats = 0, w_floats = 0, total = 0;
  __host__ __device__ DxLanesLayout(const Conv2dShape& s, int jw, int kc) {
    const int widest = (s.W + kLanesStride - 1) / kLanesStride;  // outputs of the widest class
    strips = (widest + jw - 1) / jw;
    items = s.H * kLanesStride * strips;
    d_floats = kc * s.P() * s.Q() * kLanesPitch;
    w_floats = kc * kLanesCt * s.R * s.S;
    total = d_floats + w_floats;
  }
};

struct FusedArgs {
  Conv2dShape s;
  DactSource d;
  ActIn x;  // fp32 or 16-bit, as d's dy and y and dx (act_io.cuh)
  const float* w;
  ActOut dx;
  float* dw;
  float* db;
  float* partial;     // (ktiles, chunks, items, kt) chunk sums
  unsigned* counter;  // (ktiles), zero on entry and on exit
  int dw_blocks, chunks, imgs_per_chunk, ktiles;
  int ct, ctiles;
  int sum_loads;  // loads in flight in the sums over chunks (CudaContext::sum_loads)
  int dx_rows;    // the data-gradient strip path's output rows a thread (strip_dx_rows)
  int dx_imgs;    // images a data-gradient block (FusedPlan::dx_imgs)
};

struct FusedPlan {
  bool ok = false;
  bool split = false;  // dw and dx blocks in two launches
  int kt = 1, ktiles = 0, chunks = 0, imgs = 0, dw_blocks = 0, threads = 256;
  int ct = 1, ctiles = 0, dx_blocks = 0, smem_floats = 0;
  int dx_imgs = 1;  // images a data-gradient block (more than one on the two-row strip path)
  int dx_threads = 0, dx_smem_floats = 0;  // the split data-gradient launch
  int rs = 1;  // the filter size the kernels are compiled for (row_taps), or 1: any size
  // Split's data gradient one image a lane (conv2d_backward_lanes.cu) where lanes_warps > 0:
  // items a block, item groups and channel tiles a 32-image group, filters staged a round,
  // strip width (4 or 7 outputs), warps an item (1 or 2: each half of a round's filters).
  int lanes_warps = 0, lanes_groups = 0, lanes_ctiles = 0, lanes_kc = 0, lanes_jw = 0;
  int lanes_ksplit = 1;
  // Split's weight gradient one image a lane (conv2d_backward_lanes.cu) where > 0: the 32-image
  // groups a chunk of the batch (a block) sums, and the chunks.
  int lanes_dw_groups = 0, lanes_dw_chunks = 0;
};

// The fused kernel for filter tile KT (dw and dx blocks in one launch; with f.split the dw
// blocks alone, then launch_dx). Instantiated for every kDwKTiles entry.
template <int KT>
void launch_fused_kt(CudaContext& ctx, const FusedPlan& f, const FusedArgs& a);

// The Split variant's data-gradient kernel (the lanes kernel where f.lanes_warps > 0).
void launch_dx(CudaContext& ctx, const FusedPlan& f, const FusedArgs& a);
void launch_dx_lanes(CudaContext& ctx, const FusedPlan& f, const FusedArgs& a);
// The lanes weight gradient (f.lanes_dw_groups > 0): its chunks' sums into a.partial
// (lanes_dw_partial floats), then their sum into a.dw and a.db.
void launch_dw_lanes(CudaContext& ctx, const FusedPlan& f, const FusedArgs& a);

// Whether the lanes kernel is compiled for this shape's stride and filter width (any channel
// count runs, in tiles of kLanesCt: few channels is what it is for).
inline bool lanes_fit(const Conv2dShape& s) {
  return s.stride == kLanesStride && s.S == kLanesS;
}

}  // namespace pcnn::cuda::tiled
