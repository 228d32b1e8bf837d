// Tensor-core tiles for the dense problems on 16-bit activations: the same problems as
// gemm_tile.cuh (a(i,k), b(k,j), store(i,j,v)), their operands rounded to bf16 or fp16 as a tile
// is fetched (exact for the 16-bit activations, a rounding of the fp32 weights and of d(pre-
// activation)), multiplied by mma.sync m16n8k16 with fp32 sums, long K ranges split over several
// blocks as on the FMA tiles (join_splits). Where the operands live: mma_layout.hpp.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/gemm_tile.cuh"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/mma_layout.hpp"
#include "core/precision.hpp"

namespace pcnn::cuda {

using MmaTileSmall = mma::MmaTile<32, 32, 2, 2>;  // 128 threads, a 16 x 16 warp tile
using MmaTileLarge = mma::MmaTile<64, 64, 2, 2>;  // 128 threads, a 32 x 32 warp tile

// Two operands rounded to the product's 16-bit format, packed low first.
template <bool kF16>
__device__ __forceinline__ uint32_t pack16(float lo, float hi) {
  const uint16_t a = kF16 ? float_to_f16(lo) : float_to_bf16(lo);
  const uint16_t b = kF16 ? float_to_f16(hi) : float_to_bf16(hi);
  return uint32_t(a) | (uint32_t(b) << 16);
}

// d += a b for one m16n8k16 product of this warp (every lane calls it).
template <bool kF16>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (kF16)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// f(nt, c, row, col) for accumulator c (0..3) of each of this lane's NT m16n8 products, with the
// row (0..15) and column (0..7) it holds in its product.
template <int NT, class F>
__device__ __forceinline__ void for_each_accumulator(int lane, F&& f) {
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      int row, col;
      mma::c_frag_coord(lane, c, row, col);
      f(nt, c, row, col);
    }
}

// Where this thread's warp works: its lane, and the first row and column of its warp tile in the
// block tile (wrow, wcol) and in C (row0, col0).
template <class T>
struct WarpTile {
  int lane, wrow, wcol, row0, col0;
  __device__ __forceinline__ WarpTile(int tile_m, int tile_n) {
    lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    wrow = warp / T::WN * T::WTM;
    wcol = warp % T::WN * T::WTN;
    row0 = tile_m * T::BM + wrow;
    col0 = tile_n * T::BN + wcol;
  }
};

// Accumulates the BM x BN tile (tile_m, tile_n) of prob over k in [k_begin, k_end) (k_begin
// even) into acc, this thread's fragments. Global loads for step s+1 are issued before step s is
// multiplied, as in gemm_tile.cuh.
template <class T, bool kF16, class Prob>
__device__ __forceinline__ void gemm_mma_accumulate(const Prob& prob, int tile_m, int tile_n,
                                                    int k_begin, int k_end, uint32_t* smem,
                                                    float (&acc)[T::MT][T::NT][4]) {
  using namespace mma;
  uint32_t* As = smem;                      // [BM][kPitch]
  uint32_t* Bs = smem + T::BM * T::kPitch;  // [BN][kPitch]
  const int tid = threadIdx.x;
  const WarpTile<T> w(tile_m, tile_n);
  const int m0 = tile_m * T::BM, n0 = tile_n * T::BN;
#pragma unroll
  for (int mt = 0; mt < T::MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < T::NT; ++nt) acc[mt][nt][0] = acc[mt][nt][1] = acc[mt][nt][2] =
        acc[mt][nt][3] = 0.f;

  uint32_t ra[T::kAWpT], rb[T::kBWpT];
  auto fetch = [&](int k0) {
#pragma unroll
    for (int u = 0; u < T::kAWpT; ++u) {
      int row, kp;
      a_word_coord(Prob::kAContigK, T::BM, tid + u * T::kThreads, row, kp);
      const int gi = m0 + row, gk = k0 + 2 * kp;
      const bool in = gi < prob.M;
      ra[u] = pack16<kF16>(in && gk < k_end ? prob.a(gi, gk) : 0.f,
                           in && gk + 1 < k_end ? prob.a(gi, gk + 1) : 0.f);
    }
#pragma unroll
    for (int u = 0; u < T::kBWpT; ++u) {
      int col, kp;
      b_word_coord(Prob::kBContigJ, T::BN, tid + u * T::kThreads, col, kp);
      const int gj = n0 + col, gk = k0 + 2 * kp;
      const bool in = gj < prob.N;
      rb[u] = pack16<kF16>(in && gk < k_end ? prob.b(gk, gj) : 0.f,
                           in && gk + 1 < k_end ? prob.b(gk + 1, gj) : 0.f);
    }
  };
  auto stash = [&]() {
#pragma unroll
    for (int u = 0; u < T::kAWpT; ++u) {
      int row, kp;
      a_word_coord(Prob::kAContigK, T::BM, tid + u * T::kThreads, row, kp);
      As[row * T::kPitch + kp] = ra[u];
    }
#pragma unroll
    for (int u = 0; u < T::kBWpT; ++u) {
      int col, kp;
      b_word_coord(Prob::kBContigJ, T::BN, tid + u * T::kThreads, col, kp);
      Bs[col * T::kPitch + kp] = rb[u];
    }
  };

  if (k_begin < k_end) fetch(k_begin);
  for (int k0 = k_begin; k0 < k_end; k0 += T::BK) {
    stash();
    __syncthreads();
    if (k0 + T::BK < k_end) fetch(k0 + T::BK);
#pragma unroll
    for (int ks = 0; ks < 2; ++ks) {
      uint32_t af[T::MT][4], bf[T::NT][2];
#pragma unroll
      for (int mt = 0; mt < T::MT; ++mt)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          af[mt][r] = As[a_frag_word(T::kPitch, w.wrow + mt * 16, ks, w.lane, r)];
#pragma unroll
      for (int nt = 0; nt < T::NT; ++nt)
#pragma unroll
        for (int r = 0; r < 2; ++r)
          bf[nt][r] = Bs[b_frag_word(T::kPitch, w.wcol + nt * 8, ks, w.lane, r)];
#pragma unroll
      for (int mt = 0; mt < T::MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < T::NT; ++nt) mma_m16n8k16<kF16>(acc[mt][nt], af[mt], bf[nt]);
    }
    __syncthreads();
  }
}

// Hands this thread's finished fragments to prob.store.
template <class T, class Prob>
__device__ __forceinline__ void gemm_mma_store(const Prob& prob, int tile_m, int tile_n,
                                               const float (&acc)[T::MT][T::NT][4]) {
  const WarpTile<T> w(tile_m, tile_n);
#pragma unroll
  for (int mt = 0; mt < T::MT; ++mt)
    for_each_accumulator<T::NT>(w.lane, [&](int nt, int c, int row, int col) {
      const int gi = w.row0 + mt * 16 + row, gj = w.col0 + nt * 8 + col;
      if (gi < prob.M && gj < prob.N) prob.store(gi, gj, acc[mt][nt][c]);
    });
}

// One (tile, split) of a problem, as gemm_split_block.
template <class T, bool kF16, class Prob>
__device__ __forceinline__ void gemm_mma_split_block(const Prob& prob, const TileGrid& g, int b,
                                                     float* partial, unsigned* counter,
                                                     uint32_t* smem) {
  const int tile = b / g.splits, split = b % g.splits;
  const int tm = tile / g.tiles_n, tn = tile % g.tiles_n;
  const int k_begin = split * g.k_chunk;
  const int k_end = min(prob.K, k_begin + g.k_chunk);
  float acc[T::MT][T::NT][4];
  gemm_mma_accumulate<T, kF16>(prob, tm, tn, k_begin, k_end, smem, acc);
  if (g.splits == 1 || join_splits<T::MT * T::NT * 4>(&acc[0][0][0], T::kThreads, tile, split,
                                                       g.splits, partial, counter))
    gemm_mma_store<T>(prob, tm, tn, acc);
}

// Up to two independent problems in one launch, as gemm_kernel_tiled (the same grids, partial
// sums and counters).
template <class T, bool kF16, class P0, class P1>
__global__ void __launch_bounds__(T::kThreads, 1)
    gemm_kernel_mma(P0 p0, TileGrid g0, P1 p1, TileGrid g1, float* partial, unsigned* counters) {
  wait_for_previous_kernel();
  __shared__ uint32_t smem[T::kSmemWords];
  const int b = blockIdx.x, blocks0 = g0.tiles * g0.splits;
  if (b < blocks0) {
    gemm_mma_split_block<T, kF16>(p0, g0, b, partial, counters, smem);
  } else {
    const size_t offset = size_t(blocks0) * T::BM * T::BN;
    gemm_mma_split_block<T, kF16>(p1, g1, b - blocks0, partial + offset, counters + g0.tiles,
                                  smem);
  }
}

}  // namespace pcnn::cuda
