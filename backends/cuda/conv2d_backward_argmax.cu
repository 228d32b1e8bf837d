// Weight gradient of a one-channel, max-pooled layer from the kept maxima (conv2d_argmax.cuh).
// A lane's item is one pooling window (image, filter, pooled row, pooled column): its gradient
// (dy through the activation) and its kept argmax pick the one conv output with a gradient, and
// the F x F input values under that output's filter meet it in F * F multiply-adds into the
// filter's sums. The strip kernel it replaces on LeNet-5's conv1 does four times the
// multiply-adds (three of each four by zero) in 168 registers, three blocks a multiprocessor;
// here a lane holds F * F + 1 sums. A first version read each item's gradient and argmax from
// global memory inside the loop, one round trip an item, and was latency-bound (H100, LeNet-5's
// conv1 at 1024: 35.1 us against the strip kernel's 37.8, ncu occupancy 18 %): now a block stages
// them in shared memory with its images first.
#include <cuda_runtime.h>

#include <algorithm>

#include "backends/cuda/common.cuh"
#include "backends/cuda/conv2d_argmax.cuh"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"

namespace pcnn::cuda {

namespace {

constexpr int kMaxWarps = 8;
constexpr long long kMaxStageBytes = kDefaultSmemBytes;  // launch.cuh

// Where a block keeps its images: each plane zero-padded to (H + 2 pad) x (W + 2 pad), its rows
// an odd number of floats apart and the plane's size odd too, so that lanes on neighbouring
// windows, rows or images fall on different banks more often than not.
struct ArgmaxStage {
  int rows, stride, plane;
  __host__ __device__ explicit ArgmaxStage(const Conv2dShape& s) {
    rows = s.H + 2 * s.pad;
    stride = (s.W + 2 * s.pad) | 1;
    plane = rows * stride;
    if (plane % 2 == 0) plane = ++rows * stride;
  }
};

// A block's shared memory, `imgs` images: their planes (from byte 0), then each window's
// gradient (float) for every filter, in dy's order (image, filter, window), then each window's
// offset in a plane (int), then the gradients' kept argmax (byte).
struct ArgmaxSmem {
  long long g, wb, a, row, bytes;  // row: the chunk's sums, where the blocks run in clusters
  __host__ __device__ ArgmaxSmem(const Conv2dShape& s, int pw, int imgs) {
    const long long windows = (long long)(s.P() / pw) * (s.Q() / pw);
    const long long per = (long long)s.K * windows * imgs;
    g = (long long)imgs * ArgmaxStage(s).plane * 4;
    wb = g + per * 4;
    a = wb + windows * 4;
    row = (a + per + 15) / 16 * 16;
    bytes = a + per;
  }
  long long with_row(const Conv2dShape& s) const { return row + 4LL * s.K * (s.R * s.S + 1); }
};

// Block: images n0 .. n0 + imgs - 1 (the chunk), every filter. The block first stages its images
// and its windows' gradients and argmax in shared memory (coalesced, all loads in flight), so the
// items wait on no global load. Each warp's sums a filter, over its lanes in a fixed order, go to
// the chunk's row (in `partial`, or in shared memory where the blocks run in clusters), and the
// chunks' rows are added in a fixed order (sum_chunk_rows or sum_cluster_rows), so a run's bits
// repeat.
template <int F>
__global__ void __launch_bounds__(kMaxWarps * 32)
    conv2d_dw_kernel_argmax(Conv2dShape s, DactSource d, ActIn x, float* partial,
                            unsigned* counters, float* dw, float* db, int imgs, int chunks,
                            int group, int cluster, int sum_loads, int fmt) {
  wait_for_previous_kernel();
  constexpr int NT = F * F + 1;  // the taps' sums, then the bias's
  extern __shared__ __align__(16) unsigned char smem[];
  const ArgmaxStage st(s);
  const int pw = d.pw, Q2 = s.Q() / pw, windows = (s.P() / pw) * Q2;
  const int chunk = blockIdx.x, n0 = chunk * imgs, count = min(imgs, s.N - n0);
  const ArgmaxSmem lay(s, pw, imgs);
  float* xs = reinterpret_cast<float*>(smem);
  float* gs = reinterpret_cast<float*>(smem + lay.g);
  int* wb = reinterpret_cast<int*>(smem + lay.wb);
  uint8_t* as = smem + lay.a;
  stage_padded_images(s, x, n0, count, st.rows, st.stride, xs);
  for (int w = threadIdx.x; w < windows; w += blockDim.x)
    wb[w] = (w / Q2) * pw * st.stride + (w % Q2) * pw;
  const auto keep = [&](int e, float g, int a) {
    gs[e] = g;
    as[e] = uint8_t(a);
  };
  load_windows(d, size_t(n0) * s.K * windows, count * s.K * windows, fmt, keep);
  copy_async_wait();
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  float* row = cluster > 1 ? reinterpret_cast<float*>(smem + lay.row)
                           : partial + size_t(chunk) * s.K * NT;
  for (int k = warp; k < s.K; k += warps) {
    float acc[NT];
#pragma unroll
    for (int v = 0; v < NT; ++v) acc[v] = 0.f;
    // The lane's items of filter k: window `win` of image `img`, 32 windows apart.
    int img = 0, win = lane;
    while (win >= windows) win -= windows, ++img;
    while (img < count) {
      const int e = (img * s.K + k) * windows + win;
      const float g = gs[e];
      const int a = as[e], ai = pw == 2 ? a >> 1 : a / pw, aj = a - ai * pw;
      // The conv output (pp * pw + ai, pq * pw + aj) reads staged rows and columns from there.
      const float* at = xs + img * st.plane + wb[win] + ai * st.stride + aj;
#pragma unroll
      for (int r = 0; r < F; ++r)
#pragma unroll
        for (int c = 0; c < F; ++c) acc[r * F + c] = fmaf(g, at[r * st.stride + c], acc[r * F + c]);
      acc[F * F] += g;
      win += 32;
      while (win >= windows) win -= windows, ++img;
    }
#pragma unroll
    for (int v = 0; v < NT; ++v) {
      float t = acc[v];
      for (int off = 16; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off);
      if (lane == 0) row[k * NT + v] = t;
    }
  }
  const auto put = [&](int v, float sum) {
    const int k = v / NT, tap = v - k * NT;
    if (tap < F * F) {
      if (dw) dw[k * F * F + tap] = sum;
    } else if (db) {
      db[k] = sum;
    }
  };
  if (cluster > 1)
    sum_cluster_rows(row, partial, counters, s.K * NT, group, put);
  else
    sum_chunk_rows<false>(partial, counters, chunk, chunks, group, s.K * NT, s.K * NT, sum_loads,
                          put);
}

}  // namespace

// The rule: a warp a filter up to eight warps (filters shared out evenly among them); images a
// block such that the chunks give about four blocks a multiprocessor, fewer where their staging
// would not fit in the default shared memory (none fitting, no plan). Four, not two: the blocks
// stage and compute in turn, and more of them overlap the one with the other (conv lab, H100,
// LeNet-5's conv1 at 1024, 2 images a block against 4: fp32 26.4 against 26.8 us, bf16 31.6
// against 38.2).
ArgmaxDwPlan plan_dw_argmax(const CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                            int chunks) {
  ArgmaxDwPlan p;
  const int pw = epi.pool_window;
  const bool fits = s.C == 1 && s.stride == 1 && s.R == s.S && (s.R == 3 || s.R == 5) &&
                    epi.pool == PoolKind::Max && pw == epi.pool_stride && s.P() >= pw &&
                    s.Q() >= pw && s.N > 0;
  if (!fits || ArgmaxSmem(s, pw, 1).bytes > kMaxStageBytes) return p;
  p.taps = s.R;
  const int per_warp = (s.K + kMaxWarps - 1) / kMaxWarps;  // filters a warp
  p.warps = (s.K + per_warp - 1) / per_warp;
  if (chunks > 0) {
    p.imgs = (s.N + chunks - 1) / chunks;
  } else {
    const long long blocks = 4LL * ctx.sm_count();
    p.imgs = int((s.N + blocks - 1) / blocks);
  }
  while (p.imgs > 1 && ArgmaxSmem(s, pw, p.imgs).bytes > kMaxStageBytes) --p.imgs;
  p.chunks = (s.N + p.imgs - 1) / p.imgs;
  p.cluster = ctx.argmax_cluster(p.chunks);
  if (ArgmaxSmem(s, pw, p.imgs).with_row(s) > kMaxStageBytes) p.cluster = 1;
  p.group = ctx.argmax_group(p.chunks / p.cluster);
  p.ok = p.cluster * argmax_counters(p.chunks / p.cluster, p.group) <=
         int(CudaContext::kCounters);
  return p;
}

void run_dw_argmax(CudaContext& ctx, const ArgmaxDwPlan& p, const Conv2dShape& s,
                   const DactSource& d, const ActIn& x, float* dw, float* db) {
  // the chunks' rows (or the clusters') and the groups'
  const int nt = p.taps * p.taps + 1, rows = p.chunks / p.cluster;
  const int counted = argmax_counters(rows, p.group);
  float* partial = ctx.scratch(size_t(rows + counted - 1) * s.K * nt);
  unsigned* counters = ctx.counters(size_t(p.cluster * counted));
  const ArgmaxSmem lay(s, d.pw, p.imgs);
  const size_t smem = size_t(p.cluster > 1 ? lay.with_row(s) : lay.bytes);
  const auto kernel = p.taps == 3 ? conv2d_dw_kernel_argmax<3> : conv2d_dw_kernel_argmax<5>;
  launch_clustered(ctx, "conv2d_dw_kernel_argmax", p.cluster, kernel, p.chunks, p.warps * 32,
                   smem, s, d, x, partial, counters, dw, db, p.imgs, p.chunks, p.group, p.cluster,
                   ctx.sum_loads(), dact_format(d));
}

}  // namespace pcnn::cuda
