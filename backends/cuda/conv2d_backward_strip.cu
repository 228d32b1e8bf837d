// Weight gradient of the single-channel strip layers (conv2d_strip.cuh; LeNet-5's conv1): a
// thread item is the forward's (image, filter group, pooled row, strip). It forms the item's
// d(pre-activation) in registers from dy and the kept argmax (2 x 14 values a filter), then walks
// the 6 input rows as the forward does: each row's 18 values, read from the block's images staged
// in shared memory, meet every tap of the filter rows that use them, 2 x 14 multiply-adds a tap
// and filter, into 25 sums a filter (and the bias's). The Tiled kernel it replaces there stages the images and d(act_out) in shared
// memory and issues 7 shared loads per 30 multiply-adds, one block a multiprocessor.
#include <cuda_runtime.h>

#include "backends/cuda/common.cuh"
#include "backends/cuda/conv2d_strip.cuh"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"

namespace pcnn::cuda {

namespace {

constexpr int kMaxThreads = 128;
// Shared memory for a block's images (the default limit less the kernel's static sums).
constexpr long long kMaxStageFloats = (48 * 1024 - 2048) / 4;

// d(pre-activation) of one pooled window's four conv outputs, as dact_at gives them (max
// pooling: the window's gradient where its kept maximum is, read once).
__device__ __forceinline__ void window_dact(const Conv2dShape& s, const DactSource& d, int n,
                                            int k, int pp, int pq, float (&v)[2][2]) {
  if (d.pool == PoolKind::Max) {
    const size_t o = ((size_t(n) * s.K + k) * (s.P() / 2) + pp) * (s.Q() / 2) + pq;
    const float g = dact_of_output(d, o);
    const int best = d.argmax[o];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j) v[i][j] = best == i * 2 + j ? g : 0.f;
    return;
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) v[i][j] = dact_at(s, d, n, k, 2 * pp + i, 2 * pq + j);
}

// Block (filter group g, chunk of images). Sums a filter: its 25 taps, then its bias.
template <int KPT>
__global__ void __launch_bounds__(kMaxThreads)
    conv2d_dw_kernel_strip(Conv2dShape s, DactSource d, ActIn x, float* partial,
                           unsigned* counter, float* dw, float* db, int chunks, int imgs,
                           int sum_loads) {
  wait_for_previous_kernel();
  constexpr int CW = 2 * kStripWT, XW = CW + 4, NV = KPT * 26;
  __shared__ float red[kMaxThreads / 32][NV];
  extern __shared__ float xs[];  // the chunk's images (StripStage)
  const int g = blockIdx.x / chunks, chunk = blockIdx.x % chunks;
  const int P2 = s.P() / 2, Q2 = s.Q() / 2, strips = (Q2 + kStripWT - 1) / kStripWT;
  const int n0 = chunk * imgs, n1 = min(s.N, n0 + imgs);
  const int items = (n1 - n0) * P2 * strips;
  const StripStage st(s, kStripWT);
  stage_padded_images(s, x, n0, n1 - n0, st.rows, st.stride, xs);
  copy_async_wait();
  __syncthreads();
  float acc[KPT][26];
#pragma unroll
  for (int kk = 0; kk < KPT; ++kk)
#pragma unroll
    for (int v = 0; v < 26; ++v) acc[kk][v] = 0.f;

  for (int item = threadIdx.x; item < items; item += blockDim.x) {
    const int strip = item % strips, pp = (item / strips) % P2, n = n0 + item / (strips * P2);
    float dv[KPT][2][CW];
#pragma unroll
    for (int kk = 0; kk < KPT; ++kk) {
      const int k = g * KPT + kk;
#pragma unroll
      for (int jj = 0; jj < kStripWT; ++jj) {
        const int pq = strip * kStripWT + jj;
        float v[2][2] = {{0.f, 0.f}, {0.f, 0.f}};
        if (k < s.K && pq < Q2) window_dact(s, d, n, k, pp, pq, v);
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          dv[kk][i][2 * jj] = v[i][0];
          dv[kk][i][2 * jj + 1] = v[i][1];
          acc[kk][25] += v[i][0] + v[i][1];
        }
      }
    }
    const float* xn = xs + size_t(n - n0) * st.plane;
    walk_strip_rows<XW>(s, st, xn, pp, strip, [&](int i, int r, const float (&xr)[XW]) {
#pragma unroll
      for (int t = 0; t < 5; ++t)
#pragma unroll
        for (int kk = 0; kk < KPT; ++kk)
#pragma unroll
          for (int j = 0; j < CW; ++j)
            acc[kk][r * 5 + t] = fmaf(dv[kk][i][j], xr[j + t], acc[kk][r * 5 + t]);
    });
  }

  // The block's sums: each warp's by shuffles, then the warps' in order; then this chunk's row.
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
#pragma unroll
  for (int kk = 0; kk < KPT; ++kk)
#pragma unroll
    for (int v = 0; v < 26; ++v) {
      float a = acc[kk][v];
      for (int off = 16; off > 0; off >>= 1) a += __shfl_down_sync(0xffffffffu, a, off);
      if (lane == 0) red[warp][kk * 26 + v] = a;
    }
  __syncthreads();
  float* rows = partial + size_t(g) * chunks * NV;
  for (int v = threadIdx.x; v < NV; v += blockDim.x) {
    float t = 0.f;
    for (int w = 0; w < warps; ++w) t += red[w][v];
    rows[size_t(chunk) * NV + v] = t;
  }
  // The last chunk block of this group adds up the chunks (chunk order).
  if (!last_block_done(&counter[g], unsigned(chunks))) return;
  for (int v = threadIdx.x; v < NV; v += blockDim.x) {
    const float sum = sum_rows_as(sum_loads, rows + v, chunks, NV);
    const int k = g * KPT + v / 26, tap = v % 26;
    if (k >= s.K) continue;
    if (tap < 25) {
      if (dw) dw[k * 25 + tap] = sum;
    } else if (db) {
      db[k] = sum;
    }
  }
}

// Floats of `imgs` staged images (one channel).
long long stage_floats(const Conv2dShape& s, int imgs) {
  return (long long)imgs * StripStage(s, kStripWT).plane;
}

}  // namespace

// The rule: 2 filters a thread where those still give each multiprocessor four blocks of 128
// (strip_fills), else 1 (H100, LeNet-5's conv1: at batch 1024 37.5 us with 2 against 50.3 with 1;
// at 512 32.7 against 24.4); blocks of 128 threads where they fill, else of one warp; about two
// items a thread, in whole images (fewer where their staged images would not fit in shared
// memory; none fitting, no plan).
StripDwPlan plan_dw_strip(const CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                          int kpt, int chunks, int threads) {
  StripDwPlan p;
  if (!strip_holds(s, epi) || s.N == 0) return p;
  p.kpt = kpt ? kpt : (strip_fills(ctx, strip_items(s, 2, kStripWT)) ? 2 : 1);
  if (p.kpt != 1 && p.kpt != 2) return p;
  p.groups = (s.K + p.kpt - 1) / p.kpt;
  const long long per_image = strip_items_per_plane(s);
  const bool fills = strip_fills(ctx, strip_items(s, p.kpt, kStripWT));
  p.threads = threads ? threads : (fills ? kMaxThreads : 32);
  if (p.threads != 32 && p.threads != 64 && p.threads != kMaxThreads) return p;
  if (chunks) {
    p.imgs = (s.N + chunks - 1) / chunks;
  } else {
    p.imgs = int(2 * p.threads / per_image);
    p.imgs = p.imgs < 1 ? 1 : (p.imgs > s.N ? s.N : p.imgs);
    while (p.imgs > 1 && stage_floats(s, p.imgs) > kMaxStageFloats) --p.imgs;
  }
  p.chunks = (s.N + p.imgs - 1) / p.imgs;
  p.ok = size_t(p.groups) <= CudaContext::kCounters && stage_floats(s, p.imgs) <= kMaxStageFloats;
  return p;
}

void run_dw_strip(CudaContext& ctx, const StripDwPlan& p, const Conv2dShape& s,
                  const DactSource& d, const ActIn& x, float* dw, float* db) {
  float* partial = ctx.scratch(size_t(p.groups) * p.chunks * p.kpt * 26);
  unsigned* counter = ctx.counters(size_t(p.groups));
  const int blocks = p.groups * p.chunks;
  const size_t smem = size_t(stage_floats(s, p.imgs)) * sizeof(float);
  if (p.kpt == 1)
    launch(ctx, "conv2d_dw_kernel_strip", conv2d_dw_kernel_strip<1>, blocks, p.threads, smem, s, d,
           x, partial, counter, dw, db, p.chunks, p.imgs, ctx.sum_loads());
  else
    launch(ctx, "conv2d_dw_kernel_strip", conv2d_dw_kernel_strip<2>, blocks, p.threads, smem, s, d,
           x, partial, counter, dw, db, p.chunks, p.imgs, ctx.sum_loads());
}

}  // namespace pcnn::cuda
