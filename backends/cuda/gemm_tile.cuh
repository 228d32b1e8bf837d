// The shared-memory tiled matrix product every dense kernel of this backend is built on.
// A "problem" says how to read op(A)(i,k) and op(B)(k,j) and what to do with each finished
// C(i,j) (scale, add bias, activate, route a column elsewhere), so one tile loop serves the
// plain GEMM, linear forward and both halves of linear backward with their epilogues fused.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "backends/cuda/common.cuh"
#include "backends/cuda/launch.cuh"

namespace pcnn::cuda {

// Block tile BM x BN, K step BK, each thread a TM x TN register tile. Scalar tiles (Vec false):
// the thread's rows strided by BM/TM and columns by BN/TN, so a warp reads consecutive shared-
// memory words one at a time. Vector tiles: the thread's rows and columns consecutive, read four
// at a time (16-byte loads), so a k step costs (TM + TN) / 4 shared-memory loads for TM x TN
// multiply-adds instead of TM + TN: the scalar tiles are bound by those loads (one per 1-4
// multiply-adds, where the SM issues four FMA instructions for one load).
template <int BM_, int BN_, int BK_, int TM_, int TN_, bool Vec_ = false>
struct TileConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr bool kVec = Vec_;
  static constexpr int TY = BM / TM, TX = BN / TN;
  static constexpr int kThreads = TX * TY;
  static constexpr int kApT = BM * BK / kThreads;  // A elements each thread loads per step
  static constexpr int kBpT = BK * BN / kThreads;
  static_assert(BM * BK % kThreads == 0 && BK * BN % kThreads == 0, "loads must divide");
  static_assert(!kVec || (TM % 4 == 0 && TN % 4 == 0), "vector tiles read four words a load");
  // Row pitches: +1 word so that the stores walking the k dimension hit different banks; +4 on
  // vector tiles, which keeps every row 16-byte aligned (those stores then conflict two-way).
  static constexpr int kPadA = kVec ? BM + 4 : BM + 1, kPadB = kVec ? BN + 4 : BN + 1;
  static constexpr int kSmemFloats = BK * kPadA + BK * kPadB;
  // The tile row of the thread's m-th accumulator row, and column of its n-th column.
  __device__ static int row(int ty, int m) { return kVec ? ty * TM + m : ty + m * TY; }
  __device__ static int col(int tx, int n) { return kVec ? tx * TN + n : tx + n * TX; }
};

using TileLarge = TileConfig<64, 64, 16, 4, 4>;   // big problems: 16 FMA per 8 smem reads
using TileMedium = TileConfig<32, 32, 32, 2, 2>;  // mid-size: more blocks
using TileSmall = TileConfig<16, 16, 32, 1, 1>;   // batch-64 dense layers: many short blocks
using TileSmallDeep = TileConfig<16, 16, 64, 1, 1>;  // same, half the K steps (latency-bound)
// Vector tile of 256 threads: 16 FMA per 2 loads. (A 128 x 64 one, 8 x 4 a thread, lost to it on
// every model's dense layer in the gemm lab, H100, session 25: Simard's 1250 -> 100 backward
// 54.8 us against 40.9.)
using TileVec64 = TileConfig<64, 64, 16, 4, 4, true>;
// The same 4 x 4 vector blocks a thread on a 32 x 32 tile of 64 threads: the scalar 32 x 32
// tile's grid (its blocks, its splits) at one shared-memory wavefront per 8 multiply-add
// instructions instead of one per one (TileMedium is bound by those reads: 4 loads for 4 FMA).
// ptxas gives it 111-167 registers (six blocks a multiprocessor at most). Bound to eight blocks
// (128 registers, no spills) it was slower: LeNet-5's 400 -> 120 backward at 1024 20.3 -> 24.8
// us in the gemm lab, the LeNet-5 step at 1024 276 -> 280 us (session 33, two H100 80GB HBM3
// machines, one call each).
using TileVec32 = TileConfig<32, 32, 16, 4, 4, true>;

// Whether a problem splits its reads (kSplitReads true): a_raw(i,k) and b_raw(k,j) only load,
// into RawA and RawB; a_of(raw, i, k) and b_of(raw, k, j) do the arithmetic on what was loaded
// (16 bits widened, dy times act'(y), the bias's column of ones). The tile loop then issues the
// next K step's loads before it computes this step and does their arithmetic as it stores them
// in shared memory, after the step: arithmetic in the fetch waited for its loads there, so the
// next step's loads were not in flight during this step's products. Step lab, H100, session 38,
// LeNet-5 us a step: bf16 205.6 -> 197.0 at 1024 and 120.1 -> 111.5 at 256; fp32 197.3 -> 194.0
// and 117.4 -> 112.2; fp32 at 64 73.2 -> 73.8 (its 1 x 1 tiles gain nothing to overlap).
template <class P, class = void>
struct SplitsReads : std::false_type {};
template <class P>
struct SplitsReads<P, std::enable_if_t<P::kSplitReads>> : std::true_type {};
template <class P, bool Split = SplitsReads<P>::value>
struct RawReads {
  using A = float;
  using B = float;
};
template <class P>
struct RawReads<P, true> {
  using A = typename P::RawA;
  using B = typename P::RawB;
};

// Accumulates one BM x BN tile of C(M,N) = sum_k a(i,k) b(k,j) over k in [k_begin, k_end)
// into acc (this thread's TM x TN part). Prob provides M, N, K, a(i,k), b(k,j), store(i,j,v) and
// two flags saying which index of A and B is contiguous in memory (so consecutive threads load
// consecutive addresses). Global loads for step s+1 are issued before step s is computed.
template <class Cfg, class Prob>
__device__ __forceinline__ void gemm_tile_accumulate(const Prob& prob, int tile_m, int tile_n,
                                                     int k_begin, int k_end, float* smem,
                                                     float (&acc)[Cfg::TM][Cfg::TN]) {
  float* As = smem;                    // [BK][kPadA]
  float* Bs = smem + Cfg::BK * Cfg::kPadA;  // [BK][kPadB]
  const int tid = threadIdx.x;
  const int tx = tid % Cfg::TX, ty = tid / Cfg::TX;
  const int m0 = tile_m * Cfg::BM, n0 = tile_n * Cfg::BN;
  constexpr bool kSplit = SplitsReads<Prob>::value;
  typename RawReads<Prob>::A ra[Cfg::kApT];
  typename RawReads<Prob>::B rb[Cfg::kBpT];
#pragma unroll
  for (int m = 0; m < Cfg::TM; ++m)
#pragma unroll
    for (int n = 0; n < Cfg::TN; ++n) acc[m][n] = 0.f;

  auto a_coord = [&](int e, int& ii, int& kk) {
    if (Prob::kAContigK) { kk = e % Cfg::BK; ii = e / Cfg::BK; }
    else { ii = e % Cfg::BM; kk = e / Cfg::BM; }
  };
  auto b_coord = [&](int e, int& kk, int& jj) {
    if (Prob::kBContigJ) { jj = e % Cfg::BN; kk = e / Cfg::BN; }
    else { kk = e % Cfg::BK; jj = e / Cfg::BK; }
  };
  auto fetch = [&](int k0) {
#pragma unroll
    for (int u = 0; u < Cfg::kApT; ++u) {
      int ii, kk;
      a_coord(tid + u * Cfg::kThreads, ii, kk);
      const int gi = m0 + ii, gk = k0 + kk;
      const bool in = gi < prob.M && gk < k_end;
      if constexpr (kSplit) ra[u] = in ? prob.a_raw(gi, gk) : typename RawReads<Prob>::A{};
      else ra[u] = in ? prob.a(gi, gk) : 0.f;
    }
#pragma unroll
    for (int u = 0; u < Cfg::kBpT; ++u) {
      int kk, jj;
      b_coord(tid + u * Cfg::kThreads, kk, jj);
      const int gk = k0 + kk, gj = n0 + jj;
      const bool in = gk < k_end && gj < prob.N;
      if constexpr (kSplit) rb[u] = in ? prob.b_raw(gk, gj) : typename RawReads<Prob>::B{};
      else rb[u] = in ? prob.b(gk, gj) : 0.f;
    }
  };
  // k0: the step fetched (a split problem's arithmetic needs the places).
  auto stash = [&](int k0) {
#pragma unroll
    for (int u = 0; u < Cfg::kApT; ++u) {
      int ii, kk;
      a_coord(tid + u * Cfg::kThreads, ii, kk);
      if constexpr (kSplit) {
        const int gi = m0 + ii, gk = k0 + kk;
        As[kk * Cfg::kPadA + ii] = gi < prob.M && gk < k_end ? prob.a_of(ra[u], gi, gk) : 0.f;
      } else {
        As[kk * Cfg::kPadA + ii] = ra[u];
      }
    }
#pragma unroll
    for (int u = 0; u < Cfg::kBpT; ++u) {
      int kk, jj;
      b_coord(tid + u * Cfg::kThreads, kk, jj);
      if constexpr (kSplit) {
        const int gk = k0 + kk, gj = n0 + jj;
        Bs[kk * Cfg::kPadB + jj] = gk < k_end && gj < prob.N ? prob.b_of(rb[u], gk, gj) : 0.f;
      } else {
        Bs[kk * Cfg::kPadB + jj] = rb[u];
      }
    }
  };

  if (k_begin < k_end) fetch(k_begin);
  for (int k0 = k_begin; k0 < k_end; k0 += Cfg::BK) {
    stash(k0);
    __syncthreads();
    if (k0 + Cfg::BK < k_end) fetch(k0 + Cfg::BK);
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; ++kk) {
      float af[Cfg::TM], bf[Cfg::TN];
      if constexpr (Cfg::kVec) {
#pragma unroll
        for (int m = 0; m < Cfg::TM; m += 4) {
          const float4 v = *reinterpret_cast<const float4*>(As + kk * Cfg::kPadA + ty * Cfg::TM + m);
          af[m] = v.x, af[m + 1] = v.y, af[m + 2] = v.z, af[m + 3] = v.w;
        }
#pragma unroll
        for (int n = 0; n < Cfg::TN; n += 4) {
          const float4 v = *reinterpret_cast<const float4*>(Bs + kk * Cfg::kPadB + tx * Cfg::TN + n);
          bf[n] = v.x, bf[n + 1] = v.y, bf[n + 2] = v.z, bf[n + 3] = v.w;
        }
      } else {
#pragma unroll
        for (int m = 0; m < Cfg::TM; ++m) af[m] = As[kk * Cfg::kPadA + Cfg::row(ty, m)];
#pragma unroll
        for (int n = 0; n < Cfg::TN; ++n) bf[n] = Bs[kk * Cfg::kPadB + Cfg::col(tx, n)];
      }
#pragma unroll
      for (int m = 0; m < Cfg::TM; ++m)
#pragma unroll
        for (int n = 0; n < Cfg::TN; ++n) acc[m][n] = fmaf(af[m], bf[n], acc[m][n]);
    }
    __syncthreads();
  }
}

// Hands this thread's finished part of the tile to prob.store.
template <class Cfg, class Prob>
__device__ __forceinline__ void gemm_tile_store(const Prob& prob, int tile_m, int tile_n,
                                                const float (&acc)[Cfg::TM][Cfg::TN]) {
  const int tx = threadIdx.x % Cfg::TX, ty = threadIdx.x / Cfg::TX;
#pragma unroll
  for (int m = 0; m < Cfg::TM; ++m)
#pragma unroll
    for (int n = 0; n < Cfg::TN; ++n) {
      const int gi = tile_m * Cfg::BM + Cfg::row(ty, m), gj = tile_n * Cfg::BN + Cfg::col(tx, n);
      if (gi < prob.M && gj < prob.N) prob.store(gi, gj, acc[m][n]);
    }
}

// How one problem's blocks are laid out: tiles x splits of the K range.
struct TileGrid {
  int tiles_n = 1, tiles = 0, splits = 1, k_chunk = 0;
};

// Split K: this block's partial sums (E a thread, acc) join those of the tile's other splits in
// `partial`. The last block of the tile to finish gets back, in acc, the sums over the splits in
// split order (deterministic) and resets the tile's counter for the next launch: true. The
// others: false, they are done.
template <int E>
__device__ __forceinline__ bool join_splits(float* acc, int kThreads, int tile, int split,
                                            int splits, float* partial, unsigned* counter) {
  float* mine = partial + (size_t(tile) * splits + split) * E * kThreads;
#pragma unroll
  for (int e = 0; e < E; ++e) mine[e * kThreads + threadIdx.x] = acc[e];
  if (!last_block_done(&counter[tile], unsigned(splits))) return false;
  const float* all = partial + size_t(tile) * splits * E * kThreads + threadIdx.x;
  // Split by split, a thread's E sums side by side: E loads in flight, each sum in split order.
#pragma unroll
  for (int e = 0; e < E; ++e) acc[e] = 0.f;
  for (int sp = 0; sp < splits; ++sp)
#pragma unroll
    for (int e = 0; e < E; ++e) acc[e] += __ldcg(all + (size_t(sp) * E + e) * kThreads);
  return true;
}

// One (tile, split) of a problem. With several splits, each block leaves its partial tile in
// `partial`; the last block of the tile to finish adds the splits in split order (deterministic)
// and applies the epilogue.
template <class Cfg, class Prob>
__device__ __forceinline__ void gemm_split_block(const Prob& prob, const TileGrid& g, int b,
                                                 float* partial, unsigned* counter, float* smem) {
  const int tile = b / g.splits, split = b % g.splits;
  const int tm = tile / g.tiles_n, tn = tile % g.tiles_n;
  const int k_begin = split * g.k_chunk;
  const int k_end = min(prob.K, k_begin + g.k_chunk);
  float acc[Cfg::TM][Cfg::TN];
  gemm_tile_accumulate<Cfg>(prob, tm, tn, k_begin, k_end, smem, acc);
  if (g.splits == 1 ||
      join_splits<Cfg::TM * Cfg::TN>(&acc[0][0], Cfg::kThreads, tile, split, g.splits, partial,
                                     counter))
    gemm_tile_store<Cfg>(prob, tm, tn, acc);
}

// Up to two independent problems in one launch: blocks [0, g0.tiles*g0.splits) take p0, the
// rest p1. Linear backward uses this to compute dw (with db folded in) and dx side by side.
// counters: g0.tiles + g1.tiles of them; partial: room for every split tile of both.
template <class Cfg, class P0, class P1>
__global__ void __launch_bounds__(Cfg::kThreads)
    gemm_kernel_tiled(P0 p0, TileGrid g0, P1 p1, TileGrid g1, float* partial,
                      unsigned* counters) {
  wait_for_previous_kernel();
  __shared__ __align__(16) float smem[Cfg::kSmemFloats];
  const int b = blockIdx.x, blocks0 = g0.tiles * g0.splits;
  if (b < blocks0) {
    gemm_split_block<Cfg>(p0, g0, b, partial, counters, smem);
  } else {
    const size_t offset = size_t(blocks0) * Cfg::BM * Cfg::BN;
    gemm_split_block<Cfg>(p1, g1, b - blocks0, partial + offset, counters + g0.tiles, smem);
  }
}

}  // namespace pcnn::cuda
