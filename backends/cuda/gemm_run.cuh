// The FMA tile engine's launches (gemm_tile.cuh), shared by the fp32 dense ops (gemm.cu), the
// 16-bit ones (linear_16.cu) and the convolutions' implicit GEMMs (conv2d_gemm.cu): the grids of
// one or two problems, split K, and Auto's choice of tile. Each file instantiates only the
// problems it runs, so their modules stay apart: the driver loads a module whole on its first
// kernel, and an fp32 run loads no 16-bit code (notes/tuning-cuda.md, session 20).
#pragma once

#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_context.hpp"
#include "backends/cuda/gemm.cuh"
#include "backends/cuda/gemm_tile.cuh"
#include "backends/cuda/launch.cuh"

namespace pcnn::cuda {

namespace {

constexpr int kSplitK = 128;   // K per split block, about 4 K steps of the small tile
constexpr int kMaxSplits = 16;

template <class Cfg, class P>
int tiles_of(const P& p) {
  return ceil_div(p.M, Cfg::BM) * ceil_div(p.N, Cfg::BN);
}

// Splits of the K range for one problem: long reductions on few tiles are latency-bound (one
// dependent load round trip per K step), so their K range is shared out over more blocks.
template <class Cfg, class P>
TileGrid grid_of(const P& p, int split_from) {
  TileGrid g;
  if (p.M <= 0 || p.N <= 0) return g;
  g.tiles_n = ceil_div(p.N, Cfg::BN);
  g.tiles = ceil_div(p.M, Cfg::BM) * g.tiles_n;
  g.k_chunk = p.K > 0 ? p.K : 1;
  if (split_from > 0 && p.K >= split_from) {
    int splits = ceil_div(p.K, kSplitK);
    splits = splits > kMaxSplits ? kMaxSplits : splits;
    g.k_chunk = ceil_div(ceil_div(p.K, splits), Cfg::BK) * Cfg::BK;
    g.splits = ceil_div(p.K, g.k_chunk);
  }
  return g;
}

// The grids of one or two problems on tiles of Cfg's size, their split-K scratch, and the launch
// of `kernel` over them (the FMA tiles' kernel or the tensor-core tiles').
template <class Cfg, class P0, class P1, class... Params>
void launch_grids(CudaContext& ctx, const char* name, void (*kernel)(Params...), const P0& p0,
                  const P1* p1, int split_from) {
  TileGrid g0 = grid_of<Cfg>(p0, split_from);
  TileGrid g1 = p1 ? grid_of<Cfg>(*p1, split_from) : TileGrid{};
  const int blocks = g0.tiles * g0.splits + g1.tiles * g1.splits;
  if (blocks == 0) return;
  float* partial = nullptr;
  unsigned* counters = nullptr;
  if (g0.splits > 1 || g1.splits > 1) {
    if (size_t(g0.tiles) + g1.tiles > CudaContext::kCounters) {
      g0 = grid_of<Cfg>(p0, 0);
      g1 = p1 ? grid_of<Cfg>(*p1, 0) : TileGrid{};
    } else {
      partial = ctx.scratch(size_t(blocks) * Cfg::BM * Cfg::BN);
      counters = ctx.counters(size_t(g0.tiles) + g1.tiles);
    }
  }
  launch(ctx, name, kernel, g0.tiles * g0.splits + g1.tiles * g1.splits, Cfg::kThreads, 0, p0,
         g0, p1 ? *p1 : P1{}, g1, partial, counters);
}

template <class Cfg, class P0, class P1>
void launch_tiled(CudaContext& ctx, const P0& p0, const P1* p1, int split_from) {
  launch_grids<Cfg>(ctx, "gemm_kernel_tiled", gemm_kernel_tiled<Cfg, P0, P1>, p0, p1, split_from);
}

// Auto (H200 measurements in notes/tuning-cuda.md): Large once every multiprocessor gets a tile and
// every reduction is long (1024^3: 104 us vs 171 us Medium; but the Simard 1024x1250->100
// backward, whose dx part reduces over only 100, took 114.5 us on Large vs 64.2 on Medium with
// split K); Medium, splitting K >= 512, once two thirds of them get a tile and every reduction
// takes at least one of its K steps (1024x400->120 forward: 11.8 us vs 23.8 us small split-K);
// else small tiles with split K (64x400->120 forward 5.8 us vs 10.8 unsplit; 1024x120->84
// backward 13.2 vs 50.5 Medium unsplit). Gemm lab, H200, session 20: with "half of them" and no
// K floor, the 64x400->120 backward (78 Medium tiles) took 7.1 us against small tiles' 5.4, and
// the last layers' backward at 1024 (84->10, 100->10: their dx reduces over 10) 7.0 and 7.7
// against 5.3; no case of the lab got slower under this rule.
constexpr int kLargeMinK = 256;
constexpr int kMediumMinK = TileMedium::BK;
// The vector tile: K split from 256.
constexpr int kVecSplitFrom = 256;

// Whether the vector tile Cfg fills the GPU for one or two problems: every K at least k_steps
// of its K steps, and its blocks, splits counted, per_sm a multiprocessor.
template <class Cfg, class P0, class P1>
bool vector_tile_fills(const CudaContext& ctx, const P0& p0, const P1* p1, int k_steps,
                       int per_sm) {
  const auto fits = [&](const auto& q) { return q.K >= k_steps * Cfg::BK; };
  const auto blocks = [](const auto& q) {
    const TileGrid g = grid_of<Cfg>(q, kVecSplitFrom);
    return g.tiles * g.splits;
  };
  return fits(p0) && (!p1 || fits(*p1)) &&
         blocks(p0) + (p1 ? blocks(*p1) : 0) >= per_sm * ctx.sm_count();
}

// Whether Auto takes the vector tile: where every K fills four of its K steps and its blocks,
// splits counted, give every multiprocessor four. Session 25, H100: the gemm lab, each launch
// repeated on its own, put it ahead on most dense layers at batch 1024 (Simard's 1250 -> 100
// backward 40.9 us against 61.6 on the 32 x 32 split; LeNet-5's 400 -> 120 backward 26.4 against
// 25.2), but inside the training step (step lab and ncu) it lost wherever it had fewer blocks:
// LeNet-5's 400 -> 120 backward at 1024 (224 blocks) 29.7 -> 43.4 us, Simard's forward (320)
// 36.9 -> 46.4, Simard at batch 256 a step 156.6 -> 163.0 us; Simard's backward at 1024 (640
// blocks) gained, 68.9 -> 52.3 us.
template <class P0, class P1>
bool vec_tiles_pay(const CudaContext& ctx, const P0& p0, const P1* p1) {
  return ctx.vec_tiles_allowed() && vector_tile_fills<TileVec64>(ctx, p0, p1, 4, 4);
}

// Whether Auto takes the 32 x 32 vector tile: for fp32 problems (`vec32`: the 16-bit ones lost
// with it), where every K fills two of its K steps and its blocks, splits counted, give every
// multiprocessor two. Predicted (session 33): the scalar 32 x 32 tile issues a shared-memory load
// a multiply-add, this one one per eight, so LeNet-5's 400 -> 120 at 1024 twice as fast.
// Measured (H100, session 33; PCNN_GEMM_VEC=1 against 2): gemm lab 15.1 -> 10.8 us forward,
// 25.3 -> 20.3 backward; step lab, fp32, LeNet-5 at 1024 299.3 -> 290.9 us, Simard 2003 at 256
// and 1024 160.0 -> 153.5 and 336.8 -> 332.7 (its 1250 -> 100 forward), the rest within 0.5 %;
// bf16, LeNet-5 at 1024 290.0 -> 296.1, Simard 2003 at 256 and 1024 +3 %.
template <class P0, class P1>
bool vec32_tiles_pay(const CudaContext& ctx, const P0& p0, const P1* p1, bool vec32) {
  return vec32 && ctx.vec32_tiles_allowed() && vector_tile_fills<TileVec32>(ctx, p0, p1, 2, 2);
}

template <class P0, class P1>
GemmVariant pick(CudaContext& ctx, GemmVariant v, const P0& p0, const P1* p1, bool vec32 = true) {
  if (v != GemmVariant::Auto) return v;
  auto total = [&](auto cfg) {
    using Cfg = decltype(cfg);
    return tiles_of<Cfg>(p0) + (p1 ? tiles_of<Cfg>(*p1) : 0);
  };
  const auto all_k_from = [&](int k) { return p0.K >= k && (!p1 || p1->K >= k); };
  // Large first: on the products that fill the GPU unsplit it beat the vector tile (gemm lab,
  // H100, session 25: 1024^3 101.2 us against 108.5); it takes none of the models' layers.
  if (all_k_from(kLargeMinK) && total(TileLarge{}) >= ctx.sm_count()) return GemmVariant::Large;
  if (vec_tiles_pay(ctx, p0, p1)) return GemmVariant::Vec64SplitK;
  if (vec32_tiles_pay(ctx, p0, p1, vec32)) return GemmVariant::Vec32SplitK;
  if (all_k_from(kMediumMinK) && 3 * total(TileMedium{}) >= 2 * ctx.sm_count())
    return GemmVariant::MediumSplitK;
  return GemmVariant::SmallSplitK;
}

template <class P0, class P1>
void run(CudaContext& ctx, GemmVariant v, const P0& p0, const P1* p1) {
  PCNN_CHECK(v != GemmVariant::Mma && v != GemmVariant::MmaLarge,
             "cuda gemm: the tensor-core tiles take 16-bit linear problems only");
  switch (pick(ctx, v, p0, p1)) {
    case GemmVariant::Large: launch_tiled<TileLarge>(ctx, p0, p1, 0); break;
    case GemmVariant::Medium: launch_tiled<TileMedium>(ctx, p0, p1, 0); break;
    case GemmVariant::MediumSplitK: launch_tiled<TileMedium>(ctx, p0, p1, 512); break;
    case GemmVariant::SmallDeep: launch_tiled<TileSmallDeep>(ctx, p0, p1, 0); break;
    case GemmVariant::SmallSplitK: launch_tiled<TileSmall>(ctx, p0, p1, 256); break;
    case GemmVariant::Vec64SplitK: launch_tiled<TileVec64>(ctx, p0, p1, kVecSplitFrom); break;
    case GemmVariant::Vec32SplitK: launch_tiled<TileVec32>(ctx, p0, p1, kVecSplitFrom); break;
    default: launch_tiled<TileSmall>(ctx, p0, p1, 0); break;
  }
}

}  // namespace

}  // namespace pcnn::cuda
