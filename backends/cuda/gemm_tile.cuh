// The shared-memory tiled matrix product every dense kernel of this backend is built on.
// A "problem" says how to read op(A)(i,k) and op(B)(k,j) and what to do with each finished
// C(i,j) (scale, add bias, activate, route a column elsewhere), so one tile loop serves the
// plain GEMM, linear forward and both halves of linear backward with their epilogues fused.
#pragma once

#include <cuda_runtime.h>

namespace pcnn::cuda {

// Block tile BM x BN, K step BK, each thread a TM x TN register tile (rows strided by BM/TM,
// columns by BN/TN so a warp reads consecutive shared-memory words).
template <int BM_, int BN_, int BK_, int TM_, int TN_>
struct TileConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr int TY = BM / TM, TX = BN / TN;
  static constexpr int kThreads = TX * TY;
  static constexpr int kApT = BM * BK / kThreads;  // A elements each thread loads per step
  static constexpr int kBpT = BK * BN / kThreads;
  static_assert(BM * BK % kThreads == 0 && BK * BN % kThreads == 0, "loads must divide");
  // +1 word per row: the loads that walk the k dimension hit different banks.
  static constexpr int kSmemFloats = BK * (BM + 1) + BK * (BN + 1);
};

using TileLarge = TileConfig<64, 64, 16, 4, 4>;   // big problems: 16 FMA per 8 smem reads
using TileMedium = TileConfig<32, 32, 32, 2, 2>;  // mid-size: more blocks
using TileSmall = TileConfig<16, 16, 32, 1, 1>;   // batch-64 dense layers: many short blocks
using TileSmallDeep = TileConfig<16, 16, 64, 1, 1>;  // same, half the K steps (latency-bound)

// One BM x BN tile of C(M,N) = sum_k a(i,k) b(k,j), handed to prob.store(i, j, acc).
// Prob provides M, N, K, a(i,k), b(k,j), store(i,j,v) and two flags saying which index of A and
// B is contiguous in memory (so consecutive threads load consecutive addresses).
// Global loads for step s+1 are issued before step s is computed (register double buffer).
template <class Cfg, class Prob>
__device__ __forceinline__ void gemm_tile_run(const Prob& prob, int tile_m, int tile_n, float* smem) {
  float* As = smem;                          // [BK][BM+1]
  float* Bs = smem + Cfg::BK * (Cfg::BM + 1);  // [BK][BN+1]
  const int tid = threadIdx.x;
  const int tx = tid % Cfg::TX, ty = tid / Cfg::TX;
  const int m0 = tile_m * Cfg::BM, n0 = tile_n * Cfg::BN;
  float ra[Cfg::kApT], rb[Cfg::kBpT];
  float acc[Cfg::TM][Cfg::TN];
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
      ra[u] = (gi < prob.M && gk < prob.K) ? prob.a(gi, gk) : 0.f;
    }
#pragma unroll
    for (int u = 0; u < Cfg::kBpT; ++u) {
      int kk, jj;
      b_coord(tid + u * Cfg::kThreads, kk, jj);
      const int gk = k0 + kk, gj = n0 + jj;
      rb[u] = (gk < prob.K && gj < prob.N) ? prob.b(gk, gj) : 0.f;
    }
  };
  auto stash = [&]() {
#pragma unroll
    for (int u = 0; u < Cfg::kApT; ++u) {
      int ii, kk;
      a_coord(tid + u * Cfg::kThreads, ii, kk);
      As[kk * (Cfg::BM + 1) + ii] = ra[u];
    }
#pragma unroll
    for (int u = 0; u < Cfg::kBpT; ++u) {
      int kk, jj;
      b_coord(tid + u * Cfg::kThreads, kk, jj);
      Bs[kk * (Cfg::BN + 1) + jj] = rb[u];
    }
  };

  if (prob.K > 0) fetch(0);
  for (int k0 = 0; k0 < prob.K; k0 += Cfg::BK) {
    stash();
    __syncthreads();
    if (k0 + Cfg::BK < prob.K) fetch(k0 + Cfg::BK);
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; ++kk) {
      float af[Cfg::TM], bf[Cfg::TN];
#pragma unroll
      for (int m = 0; m < Cfg::TM; ++m) af[m] = As[kk * (Cfg::BM + 1) + ty + m * Cfg::TY];
#pragma unroll
      for (int n = 0; n < Cfg::TN; ++n) bf[n] = Bs[kk * (Cfg::BN + 1) + tx + n * Cfg::TX];
#pragma unroll
      for (int m = 0; m < Cfg::TM; ++m)
#pragma unroll
        for (int n = 0; n < Cfg::TN; ++n) acc[m][n] = fmaf(af[m], bf[n], acc[m][n]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int m = 0; m < Cfg::TM; ++m)
#pragma unroll
    for (int n = 0; n < Cfg::TN; ++n) {
      const int gi = m0 + ty + m * Cfg::TY, gj = n0 + tx + n * Cfg::TX;
      if (gi < prob.M && gj < prob.N) prob.store(gi, gj, acc[m][n]);
    }
}

// Up to two independent problems in one launch: blocks [0, tiles0) take p0, the rest p1.
// Linear backward uses this to compute dw (with db folded in) and dx side by side.
template <class Cfg, class P0, class P1>
__global__ void __launch_bounds__(Cfg::kThreads)
    gemm_kernel_tiled(P0 p0, int tiles0_n, int tiles0, P1 p1, int tiles1_n) {
  __shared__ float smem[Cfg::kSmemFloats];
  int t = blockIdx.x;
  if (t < tiles0) {
    gemm_tile_run<Cfg>(p0, t / tiles0_n, t % tiles0_n, smem);
  } else {
    t -= tiles0;
    gemm_tile_run<Cfg>(p1, t / tiles1_n, t % tiles1_n, smem);
  }
}

}  // namespace pcnn::cuda
