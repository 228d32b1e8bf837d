// Tensor-core convolution forward on 16-bit activations (bf16 or fp16 x and y): one block an
// image and a tile of up to 32 output channels, the padded image staged as its 16-bit words (no
// widening: they are already the products' operands), the filters rounded to that format and
// packed as B words, and each warp an m16 tile of output rows at a time, mma.sync m16n8k16 over
// the taps with fp32 sums from the biases. The epilogue is the Tiled kernel's (activation, the
// fused 2 x 2 pool with its first-maximum rule and argmax byte, avg's kept pre-pool output), the
// window's four corners gathered by shuffles. Where the operands sit: conv_mma_layout.hpp.
//
// Against the fp32 kernels (which the 16-bit Tiled form runs): per m16n8k16 product (4096
// multiply-adds, 128 FFMA a lane) a lane issues 8 16-bit shared loads and 4 packs for A (shared by
// the tile's n8 products), 2 loads for B and one mma.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/common.cuh"
#include "backends/cuda/conv2d_forward_out.cuh"
#include "backends/cuda/conv_mma_layout.hpp"
#include "backends/cuda/gemm_mma.cuh"
#include "backends/cuda/launch.cuh"
#include "core/activation_math.hpp"

namespace pcnn::cuda {

constexpr int kConvMmaThreads = 128;  // four warps, each an m16 tile at a time

// Whole block: filters k0 .. k0 + kt - 1 as B words (zero past K and past the taps), the tap
// offsets, the biases (zero past K), and image n zero-padded as 16-bit words, then the zero plane.
// Four words of each a round, every load of the round issued before any value is packed or
// stored: a word past the end or in the padding loads an address in bounds (the first filter's
// first tap, the image's first word) and is replaced by zero afterwards, so no branch stands
// between the loads. A loop of one word a turn, or one behind a test each, waited a round trip a
// word (each store needs its load, and a branch keeps the next load behind it).
template <bool kF16>
__device__ __forceinline__ void stage_conv_mma(const Conv2dShape& s, const mma::ConvMmaLayout& L,
                                               const uint16_t* x, const float* w, const float* bias,
                                               int n, int k0, uint32_t* ws, int* taps, float* bs,
                                               uint16_t* xs) {
  constexpr int U = 4;
  const int have_k = min(L.kt, s.K - k0), words = L.kt * L.words_k;
  const float* wk = w + size_t(k0) * L.taps;
  for (int e0 = threadIdx.x; e0 < words; e0 += U * blockDim.x) {
    float lo[U], hi[U];
    bool in_lo[U], in_hi[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int e = e0 + u * blockDim.x, j = e / L.words_k, t0 = 2 * (e % L.words_k);
      const bool in = e < words && j < have_k;
      in_lo[u] = in && t0 < L.taps;
      in_hi[u] = in && t0 + 1 < L.taps;
      lo[u] = wk[in_lo[u] ? size_t(j) * L.taps + t0 : 0];
      hi[u] = wk[in_hi[u] ? size_t(j) * L.taps + t0 + 1 : 0];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int e = e0 + u * blockDim.x;
      if (e < words)
        ws[(e / L.words_k) * L.pitch + e % L.words_k] =
            pack16<kF16>(in_lo[u] ? lo[u] : 0.f, in_hi[u] ? hi[u] : 0.f);
    }
  }
  for (int k = threadIdx.x; k < L.kpad; k += blockDim.x) taps[k] = mma::tap_offset(s, L, k);
  for (int j = threadIdx.x; j < L.kt; j += blockDim.x)
    bs[j] = bias && j < have_k ? bias[k0 + j] : 0.f;
  const size_t xn = size_t(n) * s.C * s.H * s.W;
  for (BoxWalk e(L.Hp, L.Wp); e.plane <= s.C;) {
    uint16_t v[U];
    int at[U];  // where in xs: -1 past the zero plane
    bool in[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int h = e.row - s.pad, wi = e.col - s.pad;
      in[u] = e.plane < s.C && h >= 0 && h < s.H && wi >= 0 && wi < s.W;
      at[u] = e.plane <= s.C ? e.index : -1;
      v[u] = x[in[u] ? xn + (size_t(e.plane) * s.H + h) * s.W + wi : xn];
      e.next();
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (at[u] >= 0) xs[at[u]] = in[u] ? v[u] : uint16_t(0);
  }
}

// The activation, then y (and, pooled, argmax / act_out) for this lane's accumulators of m16 tile
// mt; every lane of the warp calls it (the pooling shuffles).
template <Activation A, int NT, int PW>
__device__ __forceinline__ void mma_epilogue_as(const Conv2dShape& s, const FwdOut& o, int n,
                                                int k0, int mt, int lane,
                                                const float (&acc)[NT][4]) {
  const int P = s.P(), Q = s.Q(), rows = mma::mma_rows(s, PW);
  for_each_accumulator<NT>(lane, [&](int nt, int c, int row, int col) {
    const int m = mt * 16 + row, k = k0 + nt * 8 + col;
    const bool live = m < rows && k < s.K;
    const float v = activate<A>(acc[nt][c]);
    int p, q;
    mma::row_position(s, PW, m, p, q);
    const size_t plane = size_t(n) * s.K + k;
    if (PW == 1) {
      if (live) o.y.store((plane * P + p) * Q + q, v);
      return;
    }
    if (live && o.act_out) o.act_out[(plane * P + p) * Q + q] = v;
    // Corners 1, 2, 3 of the window as the corner-0 lane sees them (lane_corner).
    const float v1 = __shfl_xor_sync(0xffffffffu, v, 4);
    const float v2 = __shfl_xor_sync(0xffffffffu, v, 8);
    const float v3 = __shfl_xor_sync(0xffffffffu, v, 12);
    if (!live || mma::lane_corner(lane) != 0) return;
    const int window = m >> 2, P2 = P / 2, Q2 = Q / 2;
    const size_t at = (plane * P2 + window / Q2) * Q2 + window % Q2;
    const float corners[4] = {v, v1, v2, v3};
    int best;
    o.y.store(at, mma::pool_corners(o.pool == PoolKind::Max, corners, best));
    if (o.pool == PoolKind::Max) o.argmax[at] = uint8_t(best);
  });
}

// Where a block's operands sit in its dynamic shared memory (ConvMmaLayout's order).
struct ConvMmaSmem {
  uint32_t* ws;
  int* taps;
  float* bs;
  uint16_t* xs;
  __device__ __forceinline__ ConvMmaSmem(const mma::ConvMmaLayout& L, uint32_t* smem) {
    ws = smem;
    taps = reinterpret_cast<int*>(ws + L.w_words);
    bs = reinterpret_cast<float*>(taps + L.tap_words);
    xs = reinterpret_cast<uint16_t*>(bs + L.bias_words);
  }
  // Shared memory past the layout's (the data-gradient kernel's fp32 staging).
  __device__ __forceinline__ float* after(const mma::ConvMmaLayout& L) const {
    return reinterpret_cast<float*>(ws + (L.bytes + 3) / 4);
  }
};

// The block's products and epilogue once its operands are staged: warp w takes the m16 tiles w,
// w + warps, ... of image n's rows, filters k0 .. k0 + NT * 8 - 1.
template <int NT, int PW, bool kF16>
__device__ __forceinline__ void conv_mma_tiles(const Conv2dShape& s, const mma::ConvMmaLayout& L,
                                               const ConvMmaSmem& m, const FwdOut& o, int n,
                                               int k0) {
  const int lane = threadIdx.x & 31, warps = blockDim.x >> 5;
  const int mtiles = (mma::mma_rows(s, PW) + 15) / 16, ksteps = L.kpad / 16;
  for (int mt = threadIdx.x >> 5; mt < mtiles; mt += warps) {
    const int lo = mma::row_base(s, L, PW, mt * 16 + (lane >> 2));
    const int hi = mma::row_base(s, L, PW, mt * 16 + (lane >> 2) + 8);
    float acc[NT][4];
    for_each_accumulator<NT>(lane,
                             [&](int nt, int c, int, int col) { acc[nt][c] = m.bs[nt * 8 + col]; });
    for (int ks = 0; ks < ksteps; ++ks) {
      uint32_t a[4];
      mma::gather_a(m.xs, m.taps, lo, hi, ks, lane, a);
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const uint32_t b[2] = {m.ws[mma::b_frag_word(L.pitch, nt * 8, ks, lane, 0)],
                               m.ws[mma::b_frag_word(L.pitch, nt * 8, ks, lane, 1)]};
        mma_m16n8k16<kF16>(acc[nt], a, b);
      }
    }
    dispatch_activation(o.act, [&](auto tag) {
      mma_epilogue_as<decltype(tag)::value, NT, PW>(s, o, n, k0, mt, lane, acc);
    });
  }
}

// x (N,C,H,W) 16-bit, w (K,C,R,S) -> y (N,K,P/PW,Q/PW) 16-bit and what FwdOut keeps. Block
// (n, k-tile of NT * 8 filters).
template <int NT, int PW, bool kF16>
__global__ void __launch_bounds__(kConvMmaThreads)
    conv2d_forward_kernel_mma(Conv2dShape s, const uint16_t* x, const float* w, FwdOut o,
                              int ktiles) {
  wait_for_previous_kernel();
  extern __shared__ uint32_t smem_words[];
  const mma::ConvMmaLayout L(s, NT * 8);
  const ConvMmaSmem m(L, smem_words);
  const int n = blockIdx.x / ktiles, k0 = (blockIdx.x % ktiles) * NT * 8;
  stage_conv_mma<kF16>(s, L, x, w, o.bias, n, k0, m.ws, m.taps, m.bs, m.xs);
  __syncthreads();
  conv_mma_tiles<NT, PW, kF16>(s, L, m, o, n, k0);
}

}  // namespace pcnn::cuda
