// Convolution backward of the cuda backend: the direct kernels, the planning of the tiled ones,
// the plan-taking launcher, and the ops conv2d_backward_data, conv2d_backward_weights and
// conv2d_fused_backward. The Tiled variant does the whole layer in one launch: weight-gradient
// blocks (a chunk of images x a tile of filters, reduced in registers, then summed over chunks
// by the tile's last block in a fixed order: deterministic, no float atomics) and data-gradient
// blocks (one image x a tile of channels, each thread owning its dx outputs and gathering over
// filters: contiguous writes, no scatter). Split runs the same blocks in two launches. Every
// block computes the d(pre-activation) it needs from dy and the kept indices while staging it.
// Their kernels: conv2d_backward_tiled_kernels.cuh. x, y, dy and dx may be stored in 16 bits
// (act_io.cuh): the op conv2d_fused_backward_16 runs the same kernels where the plan is Tiled or
// Split, and by default the Mma variant (the weight gradient, and at unit stride dx, on tensor
// cores: conv2d_backward_mma.cu) where it fits.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "backends/cuda/common.cuh"
#include "backends/cuda/conv2d.cuh"
#include "backends/cuda/conv2d_backward_mma.cuh"
#include "backends/cuda/conv2d_backward_tiled.cuh"
#include "backends/cuda/conv2d_common.cuh"
#include "backends/cuda/conv2d_argmax.cuh"
#include "backends/cuda/conv2d_strip.cuh"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/gemm.cuh"
#include "backends/cuda/launch.cuh"

namespace pcnn {

namespace cuda {

namespace {

using namespace tiled;

// ---- direct fallbacks (any shape) -----------------------------------------------------

// dy and what the forward kept -> dact (N,K,P,Q) = d(pre-activation), for the GEMM path
__global__ void conv2d_dact_kernel(Conv2dShape s, DactSource d, float* dact) {
  wait_for_previous_kernel();
  const int P = s.P(), Q = s.Q();
  const size_t total = size_t(s.N) * s.K * P * Q, stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int q = int(i % Q), p = int((i / Q) % P), k = int((i / (size_t(P) * Q)) % s.K);
    dact[i] = dact_at(s, d, int(i / (size_t(P) * Q * s.K)), k, p, q);
  }
}

// dact (N,K,P,Q) on the fly, w (K,C,R,S) -> dx (N,C,H,W); one thread per dx element
__global__ void conv2d_backward_data_kernel_direct(Conv2dShape s, DactSource d, const float* w,
                                                   ActOut dx) {
  wait_for_previous_kernel();
  const int P = s.P(), Q = s.Q();
  const size_t total = size_t(s.N) * s.C * s.H * s.W;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int wi = int(i % s.W), h = int((i / s.W) % s.H), c = int((i / (size_t(s.H) * s.W)) % s.C);
    const int n = int(i / (size_t(s.H) * s.W * s.C));
    float acc = 0.f;
    for (int k = 0; k < s.K; ++k)
      for (int r = 0; r < s.R; ++r) {
        const int ph = h + s.pad - r;
        if (ph < 0 || ph % s.stride) continue;
        const int p = ph / s.stride;
        if (p >= P) continue;
        for (int t = 0; t < s.S; ++t) {
          const int qw = wi + s.pad - t;
          if (qw < 0 || qw % s.stride) continue;
          const int q = qw / s.stride;
          if (q >= Q) continue;
          acc = fmaf(w[((size_t(k) * s.C + c) * s.R + r) * s.S + t], dact_at(s, d, n, k, p, q),
                     acc);
        }
      }
    dx.store(i, acc);
  }
}

// x (N,C,H,W), dact on the fly -> dw (K,C,R,S), db (K); block = one weight (or one bias,
// item == C*R*S) summed over N*P*Q with a fixed-order block sum
__global__ void conv2d_backward_weights_kernel_direct(Conv2dShape s, DactSource d, ActIn x,
                                                      float* dw, float* db) {
  wait_for_previous_kernel();
  __shared__ float red[32];
  const int crs = s.C * s.R * s.S, items = crs + 1;
  const int k = blockIdx.x / items, item = blockIdx.x % items;
  const bool is_bias = item == crs;
  if (is_bias ? !db : !dw) return;  // uniform per block: no thread reaches block_sum
  const int c = item / (s.R * s.S), r = (item / s.S) % s.R, t = item % s.S;
  const int P = s.P(), Q = s.Q();
  float acc = 0.f;
  for (int e = threadIdx.x; e < s.N * P * Q; e += blockDim.x) {
    const int q = e % Q, p = (e / Q) % P, n = e / (P * Q);
    const float g = dact_at(s, d, n, k, p, q);
    if (is_bias) {
      acc += g;
    } else {
      const int h = p * s.stride - s.pad + r, wi = q * s.stride - s.pad + t;
      if (h >= 0 && h < s.H && wi >= 0 && wi < s.W)
        acc = fmaf(g, x.load(((size_t(n) * s.C + c) * s.H + h) * s.W + wi), acc);
    }
  }
  const float total = block_sum(acc, red);
  if (threadIdx.x == 0) {
    if (is_bias) db[k] = total;
    else if (dw) dw[size_t(k) * crs + item] = total;
  }
}

// ---- planning of the Tiled and Split variants (kernels: conv2d_backward_tiled*) ---------

// The lanes kernel's blocks for Split's data gradient (conv2d_backward_tiled.cuh); false (f
// unchanged) where the plan's knobs are out of range or a block's smallest staging does not fit.
bool plan_lanes(const Conv2dShape& s, const ConvBackwardPlan& plan, FusedPlan& f) {
  const int jw = plan.dx_lanes_jw ? plan.dx_lanes_jw : 7;
  const int warps = plan.dx_lanes > 0 ? plan.dx_lanes : kLanesMaxWarps;
  const int ksplit = plan.dx_lanes_ksplit ? plan.dx_lanes_ksplit : kLanesMaxSplit;
  if (!lanes_fit(s) || (jw != 4 && jw != 7) || warps > kLanesMaxWarps || plan.dx_lanes_kc < 0 ||
      ksplit < 1 || ksplit > kLanesMaxSplit)
    return false;
  const DxLanesLayout one(s, jw, 1);
  if (one.total > kMaxSmemFloats) return false;
  // Rounds of equal size, as few as fit the default shared memory.
  const int most = plan.dx_lanes_kc ? plan.dx_lanes_kc : kMaxSmemFloats / one.total;
  const int kc = ceil_div(s.K, ceil_div(s.K, most < s.K ? most : s.K));
  const int groups = ceil_div(one.items, warps), per_block = ceil_div(one.items, groups);
  // With two warps an item, the second's sums pass through shared memory at the end.
  const int red = ksplit == 2 ? per_block * 32 * kLanesCt * jw : 0;
  const int floats = std::max(DxLanesLayout(s, jw, kc).total, red);
  if (floats > kMaxSmemFloats) return false;
  f.lanes_jw = jw;
  f.lanes_kc = kc;
  f.lanes_groups = groups;
  f.lanes_warps = per_block;
  f.lanes_ksplit = ksplit;
  f.lanes_ctiles = ceil_div(s.C, kLanesCt);
  f.dx_smem_floats = floats;
  return true;
}

// The lanes weight gradient's chunks (conv2d_backward_tiled.cuh); false (f unchanged) where the
// shape is not one it is compiled for or its block does not fit.
bool plan_dw_lanes(CudaContext& ctx, const Conv2dShape& s, const ConvBackwardPlan& plan,
                   FusedPlan& f) {
  if (!lanes_fit(s) || s.R > kLanesDwMaxWarps || lanes_dw_floats(s) > kMaxSmemFloats) return false;
  const int groups = ceil_div(s.N, kLanesImages), tiles = s.C * ceil_div(s.K, kLanesKt);
  // About four blocks a multiprocessor, unless the plan asks for fewer chunks.
  int chunks = plan.dw_lanes > 0 ? plan.dw_lanes : ceil_div(4 * ctx.sm_count(), tiles);
  chunks = std::min(std::max(chunks, 1), groups);
  f.lanes_dw_groups = ceil_div(groups, chunks);
  f.lanes_dw_chunks = ceil_div(groups, f.lanes_dw_groups);
  return true;
}

// Whether Auto's Split takes the lanes kernel it could run: only where its blocks fill half the
// GPU or more (kernel lab, H100, Simard 2003's conv2 backward: at batch 1024, 128 blocks, 160 us
// against 229; at 64, 8 blocks, 64 against 32).
bool lanes_pay(CudaContext& ctx, const Conv2dShape& s, const FusedPlan& f) {
  const int blocks = ceil_div(s.N, kLanesImages) * f.lanes_ctiles * f.lanes_groups;
  return 2 * blocks >= ctx.sm_count();
}

// The most threads of a weight-gradient block where the plan leaves it open (0: kMaxThreads).
// 256, so two blocks share a multiprocessor, for unit-stride layers and from 1024 images a
// batch; 512 else. Step lab, H100, session 25, 256 against 512 interleaved twice: LeNet-5 (both
// layers unit-stride) fp32 +5.5 / +2.4 / +8.2 % at batch 64 / 256 / 1024 (2.78M -> 3.01M images/s
// at 1024), bf16 +8 / -2 / +2 %; Simard 2003 (its conv1 strided, its conv2's weight gradient
// one image a lane) +0.7 % at 1024 but -1 to -2 % at 64 and 256. PCNN_CONV_DW_THREADS=128, 256
// or 512 sets it for every layer.
int auto_dw_threads(const CudaContext& ctx, const Conv2dShape& s) {
  if (ctx.conv_dw_threads()) return ctx.conv_dw_threads();
  return s.stride == 1 || s.N >= 1024 ? 256 : 0;
}

// The next smaller instantiated filter tile than `kt`, else 0.
int tile_below(int kt) {
  for (int i = 1; i < 6; ++i)
    if (kDwKTiles[i] == kt) return kDwKTiles[i - 1];
  return 0;
}
// That tile where `kt` leaves filters idle (6 of 16: three tiles for 18) and it covers K exactly
// (4: four tiles for 16), else 0: what plan 2 takes, and what plan 3 times against `kt`.
int exact_tile_below(const Conv2dShape& s, int kt) {
  const int below = tile_below(kt);
  return below && s.K % kt && s.K % below == 0 ? below : 0;
}

// Whether filter tiles a and b are compiled into one module (conv2d_backward_tiled_kt1_2.cu,
// kt4_6, kt8_16): the driver loads a module whole on its first kernel, and timing a tile of
// another module costs a run that module's load (H100, session 27: plan 4 timing 6-filter tiles
// beside fast3x3's 8 and 16 made `--recipe fast`'s first two steps 0.08 s against 0.04).
bool same_module(int a, int b) { return a / 4 == b / 4 || (a >= 8 && b >= 8); }

// The data-gradient strip path's output rows a thread (a unit-stride 3x3 or 5x5 layer; others
// ignore it): two where the launch's two-row items still fill four blocks of 128 a
// multiprocessor (strip_fills, the strip forward's line), else one, whose threads are twice as
// many. Kernel lab, H100, session 32:
// LeNet-5's conv2 at batch 1024 118.5 -> 111.0 us with two (the step 309.8 -> 302.0); fast3x3's
// conv2 at 128 65.9 -> 68.0, and the LeNet-5 step at 256 148.6 -> 158.3 (both under the line).
int strip_dx_rows(const CudaContext& ctx, const Conv2dShape& s) {
  if (ctx.dx_rows()) return ctx.dx_rows();
  const long long items =
      (long long)s.N * s.C * ((s.H + 1) / 2) * ((s.W + kDxStrip - 1) / kDxStrip);
  return strip_fills(ctx, items) ? 2 : 1;
}

// Images a data-gradient block of the one-launch kernel takes: one, or on the two-row strip path
// as many as its threads have items for (LeNet-5's conv2: 84 items an image, 256 threads: 3),
// within `smem_limit` and PCNN_DX_IMAGES (CudaContext::dx_images). Why: ncu of the split data-
// gradient kernel, LeNet-5's conv2 at 1024 (H100, session 32): issue-bound, 84 of 256 threads
// busy. Kernel lab (H100, session 33), that layer at 1024: Tiled 113.5 us -> 104.5 with two
// images a block, 101.1 with three (the step 291 -> 276 us); Split's kernel 136.2 -> 142.3 with
// three (it keeps four blocks a multiprocessor only with one image), so Split keeps one.
int dx_images(const CudaContext& ctx, const Conv2dShape& s, int ct, bool strip, bool split,
              int threads, int smem_limit) {
  const int asked = ctx.dx_images();
  if (asked <= 1 || split || !strip || strip_dx_rows(ctx, s) != 2) return 1;
  const int items = ct * ((s.H + 1) / 2) * ceil_div(s.W, kDxStrip);
  int imgs = std::min(std::min(asked, threads / items), s.N);
  while (imgs > 1 && DxLayout(s, ct, strip, imgs).total > smem_limit) --imgs;
  return imgs < 1 ? 1 : imgs;
}

FusedPlan plan_fused(CudaContext& ctx, const Conv2dShape& s, bool want_dw, bool want_dx,
                     const ConvBackwardPlan& plan) {
  FusedPlan f;
  f.split = plan.variant == ConvBwdVariant::Split && want_dw && want_dx;
  // What a block may use here: the default, or the opt-in where the device offers it.
  const int smem_limit =
      ctx.smem_optin_floats() >= kMaxOptInSmemFloats ? kMaxOptInSmemFloats : kMaxSmemFloats;
  const int items = s.C * s.R * s.S + 1;  // chunk sums per filter: every tap plus the bias
  f.rs = plan.generic_taps ? 1 : row_taps(s);
  const int ts = f.rs;  // taps a weight-gradient thread owns, as the kernels are compiled
  const bool strip = s.stride == 1 && f.rs > 1;  // the data-gradient blocks' strip path
  if (s.C * s.R * s.S / ts + 1 > kMaxThreads) return f;
  if (want_dw) {
    // Chunks per filter tile: about one block per multiprocessor in all, but few enough that
    // the last block's sum over chunks (one block per tile) stays short.
    // (With smaller blocks, dw_threads, as many more as then share a multiprocessor.)
    const int dw_threads = plan.dw_threads ? plan.dw_threads : auto_dw_threads(ctx, s);
    const int per_sm = dw_threads > 0 && dw_threads < kMaxThreads ? kMaxThreads / dw_threads : 1;
    auto chunks_for = [&](int kt) {
      const int per_tile = items * kt, ktiles = ceil_div(s.K, kt);
      int c = plan.dw_chunks ? plan.dw_chunks : ceil_div(per_sm * ctx.sm_count(), ktiles);
      const int tail = ctx.dw_blocks_before()
                           ? kMaxTailFloatsBefore * (s.N > 256 ? s.N / 256 : 1)
                           : kMaxTailFloats * (s.N > 1024 ? s.N / 1024 : 1);
      if (!plan.dw_chunks && c > tail / per_tile) c = tail / per_tile;
      c = c < 1 ? 1 : (c > s.N ? s.N : c);
      return ceil_div(s.N, ceil_div(s.N, c));  // chunks of equal size
    };
    // Filter tile: the largest instantiated one (from the smallest covering K down) whose
    // blocks fill at least half of the places the multiprocessors have for them (two each for
    // 256-thread blocks). Until session 26 it was three quarters of one block a multiprocessor,
    // whatever the block size (PCNN_CONV_DW_BLOCKS=0): with 256-thread blocks that left half the
    // places empty, most on one-channel layers (kernel lab, H100, session 26: fast3x3's first
    // layer at batch 128, 16 filters a block, 128 blocks, 30.0 us against 19.7 with 8 filters
    // and 256 blocks; LeNet-5's at 64, 11.5 us with 2 filters and 192 blocks against 12.7 with 4).
    const auto too_few = [&](int kt) {
      const int blocks = ceil_div(s.K, kt) * chunks_for(kt);
      return ctx.dw_blocks_before() ? 4 * blocks < 3 * ctx.sm_count()
                                    : 2 * blocks < per_sm * ctx.sm_count();
    };
    if (plan.dw_k_tile) {
      f.kt = plan.dw_k_tile;
    } else {
      int i = 0;
      while (i < 5 && kDwKTiles[i] < s.K) ++i;
      while (i > 0 && too_few(kDwKTiles[i])) --i;
      if (ctx.dw_plan() == 2 && exact_tile_below(s, kDwKTiles[i])) --i;
      // 16 filters x 5 taps of accumulators spill (ptxas, sm_90): stop at 8 for 5x5 filters.
      if (kDwKTiles[i] == 16 && ts == 5) --i;
      f.kt = kDwKTiles[i];
    }
    bool known = false;
    for (int k : kDwKTiles) known |= k == f.kt;
    if (!known) return f;
    f.ktiles = ceil_div(s.K, f.kt);
    f.imgs = ceil_div(s.N, chunks_for(f.kt));
    f.chunks = ceil_div(s.N, f.imgs);
    f.dw_blocks = f.ktiles * f.chunks;
    if (f.ktiles > int(CudaContext::kCounters)) return f;
    // Parts: split the (image, row) pairs of a chunk so a block has up to 512 threads busy,
    // as far as the per-part sums fit in shared memory.
    const int witems = s.C * s.R * (s.S / ts) + 1;
    const int max_threads = dw_threads ? dw_threads : kMaxThreads;
    if (max_threads > kMaxThreads) return f;
    int parts = max_threads / witems;
    const int rows = f.imgs * s.P();
    if (parts > rows) parts = rows;
    if (parts > kMaxSmemFloats / (witems * f.kt * ts)) parts = kMaxSmemFloats / (witems * f.kt * ts);
    if (parts < 1) return f;
    f.threads = witems * parts;
    // Rounding up to whole warps must not add a part whose sums would not fit.
    const int rounded = (f.threads + 31) / 32 * 32;
    if (rounded <= max_threads && (rounded / witems) * witems * f.kt * ts <= kMaxSmemFloats)
      f.threads = rounded;
    f.smem_floats = DwLayout(s, f.kt, ts, f.threads, f.imgs).total;
  }
  if (want_dx) {
    int ctiles = plan.dx_c_tiles ? plan.dx_c_tiles : ceil_div(2 * ctx.sm_count(), s.N);
    ctiles = ctiles < 1 ? 1 : (ctiles > s.C ? s.C : ctiles);
    // The widest channel tile, halving from the one asked for, whose block fits `limit`.
    const auto tile_within = [&](int limit) {
      int ct = ceil_div(s.C, ctiles);
      while (DxLayout(s, ct, strip).total > limit && ct > 1) ct = ceil_div(ct, 2);
      return ct;
    };
    // Past the default the block opts in rather than narrowing its tile: each block stages all
    // of an image's d(act_out), so a narrow tile stages it again for fewer channels.
    f.ct = tile_within(smem_limit);
    f.ctiles = ceil_div(s.C, f.ct);
    const int dx_threads = f.split ? (plan.dx_threads ? plan.dx_threads : kDxThreads) : f.threads;
    f.dx_imgs = dx_images(ctx, s, f.ct, strip, f.split, dx_threads, smem_limit);
    f.dx_blocks = ceil_div(s.N, f.dx_imgs) * f.ctiles;
    const int dx_floats = DxLayout(s, f.ct, strip, f.dx_imgs).total;
    if (f.split) {
      // The whole block even where it has fewer strips than threads: every thread also stages
      // d(act_out) into shared memory, the longer part on small images (kernel lab, H200:
      // LeNet-5's conv2 at batch 64 26.5 us with 256 threads against 39.8 with 64).
      f.dx_threads = dx_threads;
      if (f.dx_threads < 32 || f.dx_threads > kDxThreads || f.dx_threads % 32) return f;
      f.dx_smem_floats = dx_floats;
      // One image a lane where it is compiled for the shape: asked for (a plan that cannot
      // have it fails), or allowed (else the kernel above).
      const bool asked = plan.dx_lanes > 0;
      FusedPlan lanes = f;
      if (asked || (plan.dx_lanes == 0 && ctx.lanes_allowed())) {
        if (plan_lanes(s, plan, lanes) && (asked || lanes_pay(ctx, s, lanes)))
          f = lanes;
        else if (asked)
          return f;
      }
      const bool dw_asked = plan.dw_lanes > 0;
      if ((dw_asked || (plan.dw_lanes == 0 && ctx.lanes_dw())) && !plan_dw_lanes(ctx, s, plan, f) &&
          dw_asked)
        return f;
    } else if (dx_floats > f.smem_floats) {
      f.smem_floats = dx_floats;
    }
  }
  f.ok = f.smem_floats <= smem_limit && f.dx_smem_floats <= smem_limit;
  return f;
}

void run_fused(CudaContext& ctx, const FusedPlan& f, const Conv2dShape& s, const DactSource& d,
               const ActIn& x, const float* w, const ActOut& dx, float* dw, float* db) {
  FusedArgs a{s, d, x, w, dx, dw, db, nullptr, nullptr, f.dw_blocks, f.chunks ? f.chunks : 1,
              f.imgs, f.ktiles, f.ct, f.ctiles ? f.ctiles : 1, ctx.sum_loads(),
              strip_dx_rows(ctx, s), f.dx_imgs};
  if (f.split && f.lanes_dw_groups) {  // both gradients one image a lane
    a.partial = ctx.scratch(lanes_dw_partial(s, f.lanes_dw_chunks));
    launch_dw_lanes(ctx, f, a);
    launch_dx(ctx, f, a);
    return;
  }
  if (f.dw_blocks) {
    const size_t per_tile = size_t(s.C * s.R * s.S + 1) * f.kt;
    a.partial = ctx.scratch(size_t(f.ktiles) * f.chunks * per_tile);
    a.counter = ctx.counters(f.ktiles);
  }
  switch (f.kt) {
    case 1: launch_fused_kt<1>(ctx, f, a); break;
    case 2: launch_fused_kt<2>(ctx, f, a); break;
    case 4: launch_fused_kt<4>(ctx, f, a); break;
    case 6: launch_fused_kt<6>(ctx, f, a); break;
    case 8: launch_fused_kt<8>(ctx, f, a); break;
    default: launch_fused_kt<16>(ctx, f, a); break;
  }
}

void run_direct(CudaContext& ctx, const Conv2dShape& s, const DactSource& d, const ActIn& x,
                const float* w, const ActOut& dx, float* dw, float* db) {
  if (dw || db) {
    const int blocks = s.K * (s.C * s.R * s.S + 1);
    launch(ctx, "conv2d_backward_weights_kernel_direct", conv2d_backward_weights_kernel_direct,
           blocks, 256, 0, s, d, x, dw, db);
  }
  if (dx) {
    launch(ctx, "conv2d_backward_data_kernel_direct", conv2d_backward_data_kernel_direct,
           grid_for(s.x_size(), 256, ctx.sm_count()), 256, 0, s, d, w, dx);
  }
}

// ---- Auto's choice between Tiled and Split ------------------------------------------------

// Both give the same bits (the same blocks summing in the same order); which is faster depends on
// the shape and the batch (H200, kernel lab: Split 6 % faster on LeNet-5's conv2 at batch 1024
// and 20 % on Simard 2003's at 64, but 50 % slower on LeNet-5's at 64 and 7 % on a 3x3 16 -> 32
// at 128 and 1024). So the first call of a shape outside a graph capture times both, median of
// five runs each, and the backend's context keeps the faster for that shape. While a graph is
// captured nothing may be timed: a shape not chosen yet gets Tiled. PCNN_CONV_SPLIT=0 or 1
// forces one (a measuring aid, as PCNN_DEPENDENT_LAUNCH is); PCNN_CUDA_LOG=1 prints each choice
// on stderr (both read by CudaContext).

// CUDA events, destroyed however the timing ends.
struct EventPair {
  cudaEvent_t a = nullptr, b = nullptr;
  EventPair() {
    PCNN_CUDA_CHECK(cudaEventCreate(&a));
    PCNN_CUDA_CHECK(cudaEventCreate(&b));
  }
  ~EventPair() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
};

// Times plan p and q of the same call alternately (after one untimed run each: the first run of
// a kernel loads its module) and returns the median microseconds of each: of five runs, or of
// one when a run takes milliseconds (large images), where the difference is plain.
std::pair<double, double> median_us(CudaContext& ctx, const FusedPlan& p, const FusedPlan& q,
                                    const std::function<void(const FusedPlan&)>& run) {
  EventPair ev;
  std::vector<float> tp, tq;
  run(p);
  run(q);
  int runs = 5;
  for (int i = 0; i < runs; ++i) {
    if (i == 1 && tp[0] + tq[0] > 4000.f) runs = 1;
    for (int which = 0; i < runs && which < 2; ++which) {
      PCNN_CUDA_CHECK(cudaEventRecord(ev.a, ctx.stream()));
      run(which ? q : p);
      PCNN_CUDA_CHECK(cudaEventRecord(ev.b, ctx.stream()));
      PCNN_CUDA_CHECK(cudaEventSynchronize(ev.b));
      float ms = 0.f;
      PCNN_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.a, ev.b));
      (which ? tq : tp).push_back(ms * 1000.f);
    }
  }
  std::sort(tp.begin(), tp.end());
  std::sort(tq.begin(), tq.end());
  return {tp[tp.size() / 2], tq[tq.size() / 2]};
}

// What names a shape and its epilogue among the choices Auto keeps (CudaContext).
CudaContext::ChoiceKey choice_key(const Conv2dShape& s, const ConvEpilogue& epi) {
  // clang-format off
  return {s.N, s.C, s.H, s.W, s.K, s.R, s.S, s.stride, s.pad,
          int(epi.act), int(epi.pool), epi.pool_window, epi.pool_stride};
  // clang-format on
}

// How a log line names a plan of `what` choice.
std::string plan_name(CudaContext::Choice what, const FusedPlan& f) {
  if (what == CudaContext::Choice::ConvSplit) return f.split ? "two launches" : "one launch";
  return std::to_string(f.kt) + "-filter tiles";
}

// Auto's pick between two plans of a layer's backward, `a` the rule's: the one kept for this
// shape, else (on the shape's first call, outside a capture) the faster of the two, timed by
// median_us, kept in the context.
FusedPlan faster_plan(CudaContext& ctx, CudaContext::Choice what, const Conv2dShape& s,
                      const ConvEpilogue& epi, const FusedPlan& a, const FusedPlan& b,
                      const std::function<void(const FusedPlan&)>& run) {
  const CudaContext::ChoiceKey key = choice_key(s, epi);
  if (const bool* second = ctx.timed_choice(what, key)) return *second ? b : a;
  if (ctx.capturing()) return a;  // nothing may be timed there
  const auto [ta, tb] = median_us(ctx, a, b, run);
  if (ctx.log_choices())
    std::fprintf(stderr,
                 "pcnn cuda: conv backward N%d C%d %dx%d K%d %dx%d stride %d pad %d: %s %.1f us, "
                 "%s %.1f us\n",
                 s.N, s.C, s.H, s.W, s.K, s.R, s.S, s.stride, s.pad, plan_name(what, a).c_str(),
                 ta, plan_name(what, b).c_str(), tb);
  ctx.set_timed_choice(what, key, tb < ta);
  return tb < ta ? b : a;
}

// The plan Auto runs: `tiled` or `split` (both fit), chosen as said above.
FusedPlan tiled_or_split(CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                         const FusedPlan& tiled, const FusedPlan& split,
                         const std::function<void(const FusedPlan&)>& run) {
  if (ctx.forced_conv_split() >= 0) return ctx.forced_conv_split() ? split : tiled;
  return faster_plan(ctx, CudaContext::Choice::ConvSplit, s, epi, tiled, split, run);
}

// The filter tile Auto runs under plans 3-5 (PCNN_CONV_DW_BLOCKS): the rule's or a smaller one,
// whichever was faster when both were timed on the shape's first call (faster_plan). No rule of
// block counts got every layer right (H100, session 27: LeNet-5's conv2, 16 filters, at batch
// 64 ran 26.7 us in 4-filter tiles against 29.1 in the rule's 6-filter ones, at 128 40.8 against
// 37.0). The smaller tile: plan 3 exact_tile_below, plan 4 the next smaller whatever it covers
// (fast3x3 at 256 +7 %, but loading another module for the timing cost `--recipe fast` 0.04 s),
// plan 5 the first or else the second where both tiles are in one module. Only between plans of
// the same chunks and threads, whose blocks sum every filter's terms in the same order (a
// filter's sums do not depend on the filters beside it in its block): the same bits either way,
// so the choice cannot change a run's results (the conv lab checks it).
FusedPlan tile_choice(CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                      const FusedPlan& rule, ConvBackwardPlan as, bool want_dw, bool want_dx,
                      const std::function<void(const FusedPlan&)>& run) {
  const int plan = want_dw ? ctx.dw_plan() : 0, below = tile_below(rule.kt);
  int smaller = plan == 3 || plan == 5 ? exact_tile_below(s, rule.kt) : 0;
  if (plan == 4 || (plan == 5 && !smaller && same_module(rule.kt, below))) smaller = below;
  if (!smaller) return rule;
  as.dw_k_tile = smaller;
  as.dw_chunks = rule.chunks;
  const FusedPlan other = plan_fused(ctx, s, want_dw, want_dx, as);
  if (!other.ok || other.chunks != rule.chunks || other.imgs != rule.imgs ||
      other.threads != rule.threads)
    return rule;
  return faster_plan(ctx, CudaContext::Choice::ConvTile, s, epi, rule, other, run);
}

bool dact_foldable(const ConvEpilogue& epi) {
  return epi.pool == PoolKind::None || epi.pool_window == epi.pool_stride;
}

// The Mma variant (16 bits only): the weight gradient on tensor cores, and dx too where the layer
// is a unit-stride one with square filters, else by Split's data-gradient kernel. Its plans, any
// of which may be unused (no dw and db, or no dx).
struct MmaBackward {
  DwMmaPlan dw;
  DxMmaPlan dx_mma;
  FusedPlan dx;
  bool ok = false;
};
MmaBackward plan_mma(CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                     bool want_dw, bool want_dx, const ConvBackwardPlan& plan) {
  MmaBackward m;
  if (!dact_foldable(epi) || s.N == 0) return m;
  if (want_dw) m.dw = plan_dw_mma(ctx, s, plan);
  ConvBackwardPlan split = plan;
  split.variant = ConvBwdVariant::Split;
  if (want_dx) m.dx_mma = plan_dx_mma(s);
  if (want_dx && !m.dx_mma.ok) m.dx = plan_fused(ctx, s, true, true, split);
  m.ok = (!want_dw || m.dw.ok) && (!want_dx || m.dx_mma.ok || m.dx.ok);
  return m;
}
void run_mma(CudaContext& ctx, const MmaBackward& m, const Conv2dShape& s, const DactSource& d,
             const ActIn& x, const float* w, const ActOut& dx, float* dw, float* db) {
  if (dw || db) run_dw_mma(ctx, m.dw, s, d, x, dw, db);
  if (dx && m.dx_mma.ok) {
    run_dx_mma(ctx, m.dx_mma, s, d, w, dx);
  } else if (dx) {
    const FusedPlan& f = m.dx;
    const FusedArgs a{s, d, x, w, dx, nullptr, nullptr, nullptr, nullptr, 0, 1, 1, 0, f.ct,
                      f.ctiles, ctx.sum_loads(), strip_dx_rows(ctx, s), f.dx_imgs};
    launch_dx(ctx, f, a);
  }
}

// The strip weight gradient where the plan asks for it, or leaves it to Auto and the context
// allows it; not ok elsewhere.
StripDwPlan strip_plan(const CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                       bool want_dx, const ConvBackwardPlan& plan) {
  const bool automatic = plan.variant == ConvBwdVariant::Auto && ctx.strip_level() >= 1;
  if ((plan.variant != ConvBwdVariant::Strip && !automatic) || want_dx) return StripDwPlan{};
  const StripDwPlan p = plan_dw_strip(ctx, s, epi, plan.dw_k_tile, plan.dw_chunks, plan.dw_threads);
  // Auto: only where the rule gives blocks of 128, four a multiprocessor (strip_fills), but under
  // PCNN_CONV_STRIP=2. On fewer threads the strips lose (H100, LeNet-5's conv1 at batch 64: 19.8
  // us against the Tiled kernel's 11.3; at 512 24.4 against 29.7, at 1024 37.5 against 46.1).
  if (automatic && ctx.strip_level() < 2 && p.threads < 128) return StripDwPlan{};
  return p;
}

// The weight gradient from the kept maxima where the plan asks for it, or leaves it to Auto and
// the context allows it; not ok elsewhere. Auto takes it wherever it fits (conv lab, H100, fp32:
// LeNet-5's conv1 26.8 us against the strip kernel's 37.9 at batch 1024, 9.8 against Tiled's
// 11.4 at 64; fast3x3's conv1 11.5 against 19.4 at 128).
ArgmaxDwPlan argmax_plan(const CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                         bool want_dx, const ConvBackwardPlan& plan) {
  const bool automatic = plan.variant == ConvBwdVariant::Auto && ctx.argmax_dw();
  if ((plan.variant != ConvBwdVariant::Argmax && !automatic) || want_dx) return ArgmaxDwPlan{};
  return plan_dw_argmax(ctx, s, epi, plan.dw_chunks);
}

// The whole backward of a layer of several channels (or one that wants dx) from the kept maxima,
// where the plan asks for it or Auto may take it (unless PCNN_CONV_ARGMAX=0 or 1); not ok
// elsewhere.
ArgmaxLayerPlan argmax_layer_plan(const CudaContext& ctx, const Conv2dShape& s,
                                  const ConvEpilogue& epi, bool want_dw, bool want_dx,
                                  const ConvBackwardPlan& plan) {
  const bool automatic = plan.variant == ConvBwdVariant::Auto && ctx.argmax_layers();
  if (plan.variant != ConvBwdVariant::Argmax && !automatic) return ArgmaxLayerPlan{};
  return plan_layer_argmax(ctx, s, epi, want_dw, want_dx, plan.dw_chunks, plan.dw_threads);
}

// The op for fp32 or 16-bit x, y, dy and dx (the latter only where native_16 says so).
void backward_any(CudaBackend& be, const Conv2dShape& s, const ConvEpilogue& epi, const ActIn& x,
                  const float* w, const ConvKept& kept, const ActIn& y, const ActIn& dy,
                  float* dact_scratch, const ActOut& dx, float* dw, float* db,
                  const ConvBackwardPlan& plan) {
  const bool want_dw = dw || db, want_dx = bool(dx);
  if (s.N == 0) {  // empty sums
    if (dw) be.fill(dw, 0.f, s.w_size());
    if (db) be.fill(db, 0.f, size_t(s.K));
    return;
  }
  CudaContext& ctx = be.context();
  const bool fp32 = x.prec == Precision::F32 && y.prec == Precision::F32 &&
                    dy.prec == Precision::F32 && dx.prec == Precision::F32;
  DactSource d{dy, y, kept.argmax, kept.act_out, epi.act, epi.pool, epi.pool_window};
  const float* dact = nullptr;  // d(pre-activation) in memory, once something has materialised it
  if (!dact_foldable(epi)) {
    PCNN_CHECK(fp32, "cuda conv2d backward: no 16-bit form of overlapping pooling windows");
    // Overlapping windows: materialise d(pre-activation) first (pool backward, then the
    // activation), outside scratch(), which the fused and GEMM paths use for their partial sums.
    float* tmp = dact_scratch ? dact_scratch : ctx.scratch_aux(s.y_size());
    const Pool2dShape ps = pooled_shape(s, epi);
    const float* y32 = static_cast<const float*>(y.p);
    const float* dy32 = static_cast<const float*>(dy.p);
    if (epi.pool == PoolKind::Max) {
      be.max_pool_backward_argmax(ps, epi.act, kept.argmax, y32, dy32, tmp);
    } else {  // avg reads no x: tmp stands in for it when no act_out is kept
      be.pool2d_backward(epi.pool, ps, kept.act_out ? kept.act_out : tmp, dy32, tmp);
      if (epi.act != Activation::None)
        be.activation_backward(epi.act, s.y_size(), kept.act_out, tmp, tmp);
    }
    d = DactSource{tmp, nullptr, nullptr, nullptr, Activation::None, PoolKind::None, 1};
    dact = tmp;
  }
  if (const ArgmaxDwPlan ap = argmax_plan(ctx, s, epi, want_dx, plan); ap.ok) {
    run_dw_argmax(ctx, ap, s, d, x, dw, db);
    return;
  }
  if (const ArgmaxLayerPlan lp = argmax_layer_plan(ctx, s, epi, want_dw, want_dx, plan); lp.ok) {
    run_layer_argmax(ctx, lp, s, d, x, w, dx, dw, db);
    return;
  }
  PCNN_CHECK(plan.variant != ConvBwdVariant::Argmax,
             "cuda conv2d backward: the Argmax variant does not fit this case");
  if (const StripDwPlan sp = strip_plan(ctx, s, epi, want_dx, plan); sp.ok) {
    run_dw_strip(ctx, sp, s, d, x, dw, db);
    return;
  }
  PCNN_CHECK(plan.variant != ConvBwdVariant::Strip,
             "cuda conv2d backward: the Strip variant does not fit this case");
  const bool auto_mma = plan.variant == ConvBwdVariant::Auto && auto_takes_mma(ctx, s);
  // The tensor-core kernels read x in 16 bits: not a first layer's fp32 input.
  if (!fp32 && x.prec != Precision::F32 && (auto_mma || plan.variant == ConvBwdVariant::Mma)) {
    const MmaBackward m = plan_mma(ctx, s, epi, want_dw, want_dx, plan);
    if (m.ok) {
      run_mma(ctx, m, s, d, x, w, dx, dw, db);
      return;
    }
  }
  PCNN_CHECK(plan.variant != ConvBwdVariant::Mma,
             "cuda conv2d backward: the Mma variant (16 bits) does not fit this case");
  if (plan.variant == ConvBwdVariant::Auto || plan.variant == ConvBwdVariant::Tiled ||
      plan.variant == ConvBwdVariant::Split) {
    ConvBackwardPlan as = plan;
    if (plan.variant == ConvBwdVariant::Auto) as.variant = ConvBwdVariant::Tiled;
    const FusedPlan rule = plan_fused(ctx, s, want_dw, want_dx, as);
    if (rule.ok) {
      const auto run = [&](const FusedPlan& p) { run_fused(ctx, p, s, d, x, w, dx, dw, db); };
      const FusedPlan f = plan.variant == ConvBwdVariant::Auto
                              ? tile_choice(ctx, s, epi, rule, as, want_dw, want_dx, run)
                              : rule;
      if (f.kt != rule.kt) {  // Split with the same tile and chunks: the same bits again
        as.dw_k_tile = f.kt;
        as.dw_chunks = f.chunks;
      }
      as.variant = ConvBwdVariant::Split;
      const FusedPlan g = plan.variant == ConvBwdVariant::Auto
                              ? plan_fused(ctx, s, want_dw, want_dx, as)
                              : FusedPlan{};
      run(g.ok && g.split ? tiled_or_split(ctx, s, epi, f, g, run) : f);
      return;
    }
    PCNN_CHECK(plan.variant == ConvBwdVariant::Auto,
               "cuda conv2d backward: the Tiled and Split variants do not fit this shape");
  }
  if (plan.variant == ConvBwdVariant::Direct) {
    run_direct(ctx, s, d, x, w, dx, dw, db);
    return;
  }
  PCNN_CHECK(fp32, "cuda conv2d backward: no 16-bit form of the GEMM path");
  if (!dact) {
    if (d.pool == PoolKind::None && d.act == Activation::None) {
      dact = static_cast<const float*>(dy.p);
    } else {
      float* buf = dact_scratch ? dact_scratch : ctx.scratch_aux(s.y_size());
      launch(ctx, "conv2d_dact_kernel", conv2d_dact_kernel,
             grid_for(s.y_size(), 256, ctx.sm_count()), 256, 0, s, d, buf);
      dact = buf;
    }
  }
  conv2d_backward_gemm(ctx, s, dact, static_cast<const float*>(x.p), w,
                       static_cast<float*>(dx.p), dw, db);
}

}  // namespace

bool conv2d_backward_supported(CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                               bool want_dx, const ConvBackwardPlan& plan) {
  if (plan.variant == ConvBwdVariant::Mma) return false;  // 16 bits only
  if (plan.variant == ConvBwdVariant::Strip) return strip_plan(ctx, s, epi, want_dx, plan).ok;
  if (plan.variant == ConvBwdVariant::Argmax)
    return argmax_plan(ctx, s, epi, want_dx, plan).ok ||
           argmax_layer_plan(ctx, s, epi, true, want_dx, plan).ok;
  if (plan.variant != ConvBwdVariant::Tiled && plan.variant != ConvBwdVariant::Split) return true;
  return dact_foldable(epi) && plan_fused(ctx, s, true, want_dx, plan).ok;
}

bool conv2d_backward_native_16(CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                               bool want_dw, bool want_dx, bool x16,
                               const ConvBackwardPlan& plan) {
  if (s.N == 0) return true;  // no kernel runs: dw and db are filled with zeros
  if (!dact_foldable(epi)) return false;  // d(pre-activation) materialised by fp32 ops first
  if (plan.variant == ConvBwdVariant::Direct) return true;
  if (plan.variant == ConvBwdVariant::Gemm) return false;
  if (argmax_plan(ctx, s, epi, want_dx, plan).ok) return true;
  if (argmax_layer_plan(ctx, s, epi, want_dw, want_dx, plan).ok) return true;
  if (plan.variant == ConvBwdVariant::Argmax) return false;
  if (strip_plan(ctx, s, epi, want_dx, plan).ok) return true;
  if (plan.variant == ConvBwdVariant::Strip) return false;
  if (!x16 && plan.variant == ConvBwdVariant::Mma) return false;
  if (x16 && (plan.variant == ConvBwdVariant::Mma ||
              (plan.variant == ConvBwdVariant::Auto && auto_takes_mma(ctx, s)))) {
    if (plan_mma(ctx, s, epi, want_dw, want_dx, plan).ok) return true;
    if (plan.variant == ConvBwdVariant::Mma) return false;
  }
  ConvBackwardPlan as = plan;
  if (as.variant == ConvBwdVariant::Auto) as.variant = ConvBwdVariant::Tiled;
  return plan_fused(ctx, s, want_dw, want_dx, as).ok;
}

void conv2d_fused_backward(CudaBackend& be, const Conv2dShape& s, const ConvEpilogue& epi,
                           const float* x, const float* w, const ConvKept& kept, const float* y,
                           const float* dy, float* dact_scratch, float* dx, float* dw, float* db,
                           const ConvBackwardPlan& plan) {
  backward_any(be, s, epi, x, w, kept, y, dy, dact_scratch, dx, dw, db, plan);
}

void conv2d_fused_backward_16(CudaBackend& be, Precision p, const Conv2dShape& s,
                              const ConvEpilogue& epi, const uint16_t* x, const float* x32,
                              const float* w, const ConvKept& kept, const uint16_t* y,
                              const uint16_t* dy, uint16_t* dx, float* dw, float* db,
                              const ConvBackwardPlan& plan) {
  backward_any(be, s, epi, x32 ? ActIn(x32) : ActIn(p, x), w, kept, ActIn(p, y), ActIn(p, dy),
               nullptr, ActOut(p, dx), dw, db, plan);
}

}  // namespace cuda

void CudaBackend::conv2d_backward_data(const Conv2dShape& s, const float* dy, const float* w,
                                       float* dx) {
  ctx_.bind();
  cuda::conv2d_fused_backward(*this, s, ConvEpilogue{}, nullptr, w, ConvKept{}, nullptr, dy,
                              nullptr, dx, nullptr, nullptr, cuda::ConvBackwardPlan{});
}

void CudaBackend::conv2d_backward_weights(const Conv2dShape& s, const float* x, const float* dy,
                                          float* dw, float* db) {
  ctx_.bind();
  cuda::conv2d_fused_backward(*this, s, ConvEpilogue{}, x, nullptr, ConvKept{}, nullptr, dy,
                              nullptr, nullptr, dw, db, cuda::ConvBackwardPlan{});
}

void CudaBackend::conv2d_fused_backward(const Conv2dShape& s, const ConvEpilogue& epi,
                                        const float* x, const float* w, const ConvKept& kept,
                                        const float* y, const float* dy, float* scratch, float* dx,
                                        float* dw, float* db) {
  ctx_.bind();
  cuda::conv2d_fused_backward(*this, s, epi, x, w, kept, y, dy, scratch, dx, dw, db,
                              cuda::ConvBackwardPlan{});
}

// Native where the plan is Mma, Tiled, Split or Direct (every kernel reads and writes the 16-bit
// tensors itself: conv2d_backward_native_16); elsewhere the composed default, on the context's
// staging when the layer passes none (stages_16bit).
void CudaBackend::conv2d_fused_backward_16(Precision p, const Conv2dShape& s,
                                           const ConvEpilogue& epi, const uint16_t* x,
                                           const float* x32, const float* w,
                                           const ConvKept& kept, const uint16_t* y,
                                           const uint16_t* dy, float* scratch, float* staging,
                                           uint16_t* dx, float* dw, float* db) {
  ctx_.bind();
  if (!cuda::conv2d_backward_native_16(ctx_, s, epi, dw || db, dx != nullptr, !x32,
                                       cuda::ConvBackwardPlan{})) {
    if (!staging) staging = ctx_.staging16(2 * (s.x_size() + fused_output_size(s, epi)));
    Backend::conv2d_fused_backward_16(p, s, epi, x, x32, w, kept, y, dy, scratch, staging, dx, dw,
                                      db);
    return;
  }
  cuda::conv2d_fused_backward_16(*this, p, s, epi, x, x32, w, kept, y, dy, dx, dw, db,
                                 cuda::ConvBackwardPlan{});
}

}  // namespace pcnn
