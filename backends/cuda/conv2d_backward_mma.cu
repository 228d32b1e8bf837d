// The weight gradient of a 16-bit convolution on tensor cores, and (unit stride, square filters)
// its data gradient through the forward's tensor-core block. dw (K x taps) and db as one
// implicit GEMM of d(pre-activation) (K x positions) by the input gathered at each position's
// taps (positions x taps, plus a column of ones for db), mma.sync m16n8k16 with the
// d(pre-activation) rounded to the activations' 16-bit format (the input already is), fp32 sums.
// A block takes a chunk of images one at a time: it stages the padded image as its 16-bit words
// and the d(pre-activation) as the fp32 kernels do (stage_dact: from dy, y and the pooling's kept
// indices), packs the latter into A words, and each of its eight warps multiplies its n8 tiles of
// taps. The chunks' sums go to a partial buffer that a second launch adds up in chunk order (many
// blocks, not the last block alone as the FMA kernels do: with tensor cores the chunks are short
// and many). Where the operands sit: conv_mma_layout.hpp.
#include <cstdint>

#include "backends/cuda/common.cuh"
#include "backends/cuda/conv2d_backward_mma.cuh"
#include "backends/cuda/conv2d_forward_mma.cuh"
#include "backends/cuda/conv_mma_layout.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/gemm_mma.cuh"
#include "backends/cuda/launch.cuh"

namespace pcnn::cuda {

namespace {

constexpr int kDwMmaThreads = 256;  // eight warps
constexpr int kDwMmaSmemBytes = kDefaultSmemBytes;
constexpr int kReduceSlices = 8;  // chunk slices a reduce block adds side by side

struct DwMmaArgs {
  Conv2dShape s;
  DactSource d;
  const uint16_t* x;
  float* partial;  // [chunks][K][taps + 1]
  int imgs;        // images a chunk
};

// Whole block: the padded image n of x as 16-bit words (the zero and ones planes after it are
// written once).
__device__ __forceinline__ void stage_image16(const Conv2dShape& s, const mma::ConvDwMmaLayout& L,
                                              const uint16_t* x, int n, uint16_t* xs) {
  const size_t xn = size_t(n) * s.C * s.H * s.W;
#pragma unroll 4
  for (BoxWalk e(L.Hp, L.Wp); e.plane < s.C; e.next()) {
    const int h = e.row - s.pad, wi = e.col - s.pad;
    const bool in = h >= 0 && h < s.H && wi >= 0 && wi < s.W;
    xs[e.index] = in ? x[xn + (size_t(e.plane) * s.H + h) * s.W + wi] : uint16_t(0);
  }
}

template <int MT, int NTW, bool kF16>
__global__ void __launch_bounds__(kDwMmaThreads, 2) conv2d_dw_kernel_mma(DwMmaArgs a) {
  wait_for_previous_kernel();
  extern __shared__ uint32_t smem_words[];
  const Conv2dShape& s = a.s;
  const mma::ConvDwMmaLayout L(s, MT);
  uint32_t* dwords = smem_words;
  float* dstage = reinterpret_cast<float*>(dwords + L.d_words);
  int* pos_base = reinterpret_cast<int*>(dstage + L.dstage_floats);
  int* col_off = pos_base + L.pos_words;
  uint16_t* xs = reinterpret_cast<uint16_t*>(col_off + L.col_words);
  const uint16_t one = kF16 ? 0x3c00 : 0x3f80;
  for (int e = threadIdx.x; e < L.kpos; e += blockDim.x)
    pos_base[e] = mma::dw_position_base(s, L, e);
  for (int e = threadIdx.x; e < L.col_words; e += blockDim.x)
    col_off[e] = mma::dw_column_offset(s, L, e);
  for (int e = threadIdx.x; e < L.Hp * L.Wp; e += blockDim.x) {
    xs[L.zero_plane() + e] = 0;
    xs[L.ones_plane() + e] = one;
  }

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int g = lane >> 2, words_k = L.kpos / 2, ksteps = L.kpos / 16;
  float acc[MT][NTW][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int j = 0; j < NTW; ++j)
      acc[mt][j][0] = acc[mt][j][1] = acc[mt][j][2] = acc[mt][j][3] = 0.f;

  const int chunk = blockIdx.x, n_begin = chunk * a.imgs, n_end = min(s.N, (chunk + 1) * a.imgs);
  float* out = a.partial + size_t(chunk) * s.K * L.cols;  // this chunk's sums, [K][taps + 1]
  for (int n = n_begin; n < n_end; ++n) {
    __syncthreads();  // the previous image is no longer read (and the tables are written)
    stage_image16(s, L, a.x, n, xs);
    stage_dact(s, a.d, n, 0, s.K, dstage, L.PQ, s.Q());
    __syncthreads();
    for (int e = threadIdx.x; e < L.mrows * words_k; e += blockDim.x) {
      const int row = e / words_k, p0 = 2 * (e % words_k);
      const float* drow = dstage + row * L.PQ;
      const bool live = row < s.K;
      dwords[row * L.dpitch + e % words_k] = pack16<kF16>(
          live && p0 < L.PQ ? drow[p0] : 0.f, live && p0 + 1 < L.PQ ? drow[p0 + 1] : 0.f);
    }
    // db from the fp32 d(pre-activation), not from its 16-bit words through the ones column: a
    // bias sums many terms of either sign, whose roundings add up (the op table's bf16 case
    // N2 C3 8x9 K4 missed by 3x its tolerance on the H100). Warp w sums the rows w, w + 8, ...;
    // lane 0 keeps the chunk's running sum in its own slot, in image order.
    for (int k = warp; k < s.K; k += warps) {
      float v = 0.f;
      for (int p = lane; p < L.PQ; p += 32) v += dstage[k * L.PQ + p];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      float& slot = out[k * L.cols + L.cols - 1];
      if (lane == 0) slot = n == n_begin ? v : slot + v;
    }
    __syncthreads();
    for (int ks = 0; ks < ksteps; ++ks) {
      uint32_t af[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          af[mt][r] = dwords[mma::a_frag_word(L.dpitch, mt * 16, ks, lane, r)];
#pragma unroll
      for (int j = 0; j < NTW; ++j) {
        const int tile = warp + j * warps;
        if (tile >= L.ntiles) break;  // the same for the whole warp
        uint32_t bf[2];
        mma::gather_dw_b(xs, pos_base, col_off[tile * 8 + g], ks, lane, bf);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) mma_m16n8k16<kF16>(acc[mt][j], af[mt], bf);
      }
    }
  }
  // This chunk's weight-gradient sums (the ones column's, db, is written above in fp32).
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
    for_each_accumulator<NTW>(lane, [&](int j, int c, int row, int col) {
      const int k = mt * 16 + row, tap = (warp + j * warps) * 8 + col;
      if (k < s.K && tap < L.cols - 1) out[k * L.cols + tap] = acc[mt][j][c];
    });
}

// dw (K, taps) and db (K) from the chunks' sums [chunks][K][cols], in a fixed order: a block
// takes 32 outputs, its warp i the chunks i, i + 8, ... (sum_rows); the eight then added in warp
// order.
__global__ void conv2d_dw_reduce_kernel(const float* partial, int chunks, int K, int cols,
                                        float* dw, float* db, int loads) {
  wait_for_previous_kernel();
  __shared__ float part[kReduceSlices][32];
  const int lane = threadIdx.x & 31, slice = threadIdx.x >> 5, per = K * cols;
  const int o = blockIdx.x * 32 + lane;
  const int mine = chunks > slice ? (chunks - slice + kReduceSlices - 1) / kReduceSlices : 0;
  const float v = o < per ? sum_rows_as(loads, partial + size_t(slice) * per + o, mine,
                                        size_t(kReduceSlices) * per)
                          : 0.f;
  part[slice][lane] = v;
  __syncthreads();
  if (slice != 0 || o >= per) return;
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kReduceSlices; ++i) sum += part[i][lane];
  const int k = o / cols, tap = o % cols;
  if (tap + 1 < cols) {
    if (dw) dw[size_t(k) * (cols - 1) + tap] = sum;
  } else if (db) {
    db[k] = sum;
  }
}

// dx (N,C,H,W) 16-bit of a unit-stride layer: block (n, channel tile of NT * 8); the forward
// block of conv2d_forward_mma.cuh on the shape dx_as_forward gives, its image the padded
// d(pre-activation) (staged in fp32 by stage_dact, then rounded into the 16-bit image), its
// filters the flipped, transposed w, no bias, no activation.
template <int NT, bool kF16>
__global__ void __launch_bounds__(kConvMmaThreads)
    conv2d_dx_kernel_mma(Conv2dShape s, DactSource d, const float* w, ActOut dx, int ctiles) {
  wait_for_previous_kernel();
  extern __shared__ uint32_t smem_words[];
  const Conv2dShape t = mma::dx_as_forward(s);
  const mma::ConvMmaLayout L(t, NT * 8);
  const ConvMmaSmem m(L, smem_words);
  float* dstage = m.after(L);
  const int n = blockIdx.x / ctiles, c0 = (blockIdx.x % ctiles) * NT * 8, RS = s.R * s.S;
  for (int e = threadIdx.x; e < L.kt * L.words_k; e += blockDim.x) {
    const int j = e / L.words_k, kp = e % L.words_k;
    float v[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int tap = 2 * kp + h, k = tap / RS, r = (tap / s.S) % s.R, tt = tap % s.S;
      v[h] = c0 + j < s.C && tap < L.taps ? w[mma::flipped_filter_index(s, c0 + j, k, r, tt)] : 0.f;
    }
    m.ws[j * L.pitch + kp] = pack16<kF16>(v[0], v[1]);
  }
  for (int k = threadIdx.x; k < L.kpad; k += blockDim.x) m.taps[k] = mma::tap_offset(t, L, k);
  for (int j = threadIdx.x; j < L.kt; j += blockDim.x) m.bs[j] = 0.f;
  for (int e = threadIdx.x; e < L.Hp * L.Wp; e += blockDim.x) m.xs[L.zero_plane() + e] = 0;
  stage_dact(s, d, n, 0, s.K, dstage, t.H * t.W, t.W);
  __syncthreads();
#pragma unroll 4
  for (BoxWalk e(L.Hp, L.Wp); e.plane < t.C; e.next()) {
    const int p = e.row - t.pad, q = e.col - t.pad;
    const bool in = p >= 0 && p < t.H && q >= 0 && q < t.W;
    const float v = in ? dstage[(e.plane * t.H + p) * t.W + q] : 0.f;
    m.xs[e.index] = kF16 ? float_to_f16(v) : float_to_bf16(v);
  }
  __syncthreads();
  const FwdOut o{nullptr, Activation::None, PoolKind::None, nullptr, nullptr, dx};
  conv_mma_tiles<NT, 1, kF16>(t, L, m, o, n, c0);
}

template <int MT, int NTW>
void launch_dw_as(CudaContext& ctx, const DwMmaPlan& p, const DwMmaArgs& a, bool f16) {
  const auto kernel =
      f16 ? conv2d_dw_kernel_mma<MT, NTW, true> : conv2d_dw_kernel_mma<MT, NTW, false>;
  launch(ctx, "conv2d_dw_kernel_mma", kernel, p.chunks, kDwMmaThreads, size_t(p.smem_bytes), a);
}

template <int MT>
void launch_dw_mt(CudaContext& ctx, const DwMmaPlan& p, const DwMmaArgs& a, bool f16) {
  if (p.ntw == 4)
    launch_dw_as<MT, 4>(ctx, p, a, f16);
  else if (p.ntw == 2)
    launch_dw_as<MT, 2>(ctx, p, a, f16);
  else
    launch_dw_as<MT, 1>(ctx, p, a, f16);
}

}  // namespace

DwMmaPlan plan_dw_mma(CudaContext& ctx, const Conv2dShape& s, const ConvBackwardPlan& plan) {
  DwMmaPlan p;
  if (s.N < 1 || s.K > 64) return p;
  p.mt = s.K <= 16 ? 1 : s.K <= 32 ? 2 : 4;
  const mma::ConvDwMmaLayout L(s, p.mt);
  const int warps = kDwMmaThreads / 32, per_warp = ceil_div(L.ntiles, warps);
  if (per_warp > 4) return p;
  p.ntw = per_warp <= 1 ? 1 : per_warp <= 2 ? 2 : 4;
  p.smem_bytes = L.bytes;
  if (p.smem_bytes > kDwMmaSmemBytes) return p;
  // Chunks: about four blocks a multiprocessor (or as the plan asks), of equal size.
  int chunks = plan.dw_chunks ? plan.dw_chunks : 4 * ctx.sm_count();
  chunks = chunks < 1 ? 1 : (chunks > s.N ? s.N : chunks);
  p.imgs = ceil_div(s.N, chunks);
  p.chunks = ceil_div(s.N, p.imgs);
  p.ok = true;
  return p;
}

DxMmaPlan plan_dx_mma(const Conv2dShape& s) {
  DxMmaPlan p;
  if (s.N < 1 || !mma::dx_as_forward_ok(s)) return p;
  p.nt = s.C <= 8 ? 1 : s.C <= 16 ? 2 : 4;
  p.ctiles = ceil_div(s.C, 8 * p.nt);
  const Conv2dShape t = mma::dx_as_forward(s);
  const int layout = (mma::ConvMmaLayout(t, 8 * p.nt).bytes + 3) / 4 * 4;
  p.smem_bytes = layout + int(sizeof(float)) * s.K * t.H * t.W;
  p.ok = p.smem_bytes <= kDwMmaSmemBytes;
  return p;
}

template <int NT>
void launch_dx_as(CudaContext& ctx, const DxMmaPlan& p, const Conv2dShape& s, const DactSource& d,
                  const float* w, const ActOut& dx) {
  const int rows = s.H * s.W, mtiles = ceil_div(rows, 16), warps = kConvMmaThreads / 32;
  const int threads = 32 * (mtiles < warps ? mtiles : warps);
  const auto kernel =
      dx.prec == Precision::F16 ? conv2d_dx_kernel_mma<NT, true> : conv2d_dx_kernel_mma<NT, false>;
  launch(ctx, "conv2d_dx_kernel_mma", kernel, s.N * p.ctiles, threads, size_t(p.smem_bytes), s, d,
         w, dx, p.ctiles);
}

void run_dx_mma(CudaContext& ctx, const DxMmaPlan& p, const Conv2dShape& s, const DactSource& d,
                const float* w, const ActOut& dx) {
  PCNN_CHECK(p.ok && dx.prec != Precision::F32,
             "cuda conv2d backward: the tensor-core data gradient is 16-bit");
  if (p.nt == 4)
    launch_dx_as<4>(ctx, p, s, d, w, dx);
  else if (p.nt == 2)
    launch_dx_as<2>(ctx, p, s, d, w, dx);
  else
    launch_dx_as<1>(ctx, p, s, d, w, dx);
}

void run_dw_mma(CudaContext& ctx, const DwMmaPlan& p, const Conv2dShape& s, const DactSource& d,
                const ActIn& x, float* dw, float* db) {
  PCNN_CHECK(p.ok && x.prec != Precision::F32,
             "cuda conv2d backward: the tensor-core weight gradient is 16-bit");
  const int cols = s.C * s.R * s.S + 1;
  DwMmaArgs a{s, d, static_cast<const uint16_t*>(x.p), ctx.scratch(size_t(p.chunks) * s.K * cols),
              p.imgs};
  const bool f16 = x.prec == Precision::F16;
  if (p.mt == 4)
    launch_dw_mt<4>(ctx, p, a, f16);
  else if (p.mt == 2)
    launch_dw_mt<2>(ctx, p, a, f16);
  else
    launch_dw_mt<1>(ctx, p, a, f16);
  launch(ctx, "conv2d_dw_reduce_kernel", conv2d_dw_reduce_kernel, ceil_div(s.K * cols, 32),
         32 * kReduceSlices, 0, a.partial, p.chunks, s.K, cols, dw, db, ctx.sum_loads());
}

}  // namespace pcnn::cuda
