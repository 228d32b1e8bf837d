// Weight gradient of a one-channel, max-pooled layer from the kept maxima (conv2d_argmax.cuh).
// A lane's item is one pooling window (image, filter, pooled row, pooled column): its gradient
// (dy through the activation) and its kept argmax pick the one conv output with a gradient, and
// the F x F input values under that output's filter, read from the block's images staged in
// shared memory, meet it in F * F multiply-adds into the filter's sums. The strip kernel it
// replaces on LeNet-5's conv1 does four times the multiply-adds (three of each four by zero) in
// 168 registers, three blocks a multiprocessor; here a lane holds F * F + 1 sums.
#include <cuda_runtime.h>

#include <algorithm>

#include "backends/cuda/common.cuh"
#include "backends/cuda/conv2d_argmax.cuh"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"

namespace pcnn::cuda {

namespace {

constexpr int kMaxWarps = 8;
constexpr long long kMaxStageFloats = 48 * 1024 / 4;  // the default dynamic shared memory

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

// Block: images n0 .. n0 + imgs - 1 (the chunk), every filter. Each warp's sums a filter, over
// its lanes in a fixed order, go to the chunk's row of `partial`; the last block adds the rows
// up in chunk order, so a run's bits repeat.
template <int F>
__global__ void __launch_bounds__(kMaxWarps * 32)
    conv2d_dw_kernel_argmax(Conv2dShape s, DactSource d, ActIn x, float* partial,
                            unsigned* counter, float* dw, float* db, int imgs, int chunks,
                            int sum_loads) {
  wait_for_previous_kernel();
  constexpr int NT = F * F + 1;  // the taps' sums, then the bias's
  extern __shared__ float xs[];
  const ArgmaxStage st(s);
  const int chunk = blockIdx.x, n0 = chunk * imgs, count = min(imgs, s.N - n0);
  stage_padded_images(s, x, n0, count, st.rows, st.stride, xs);
  copy_async_wait();
  __syncthreads();
  const int pw = d.pw, Q2 = s.Q() / pw, windows = (s.P() / pw) * Q2, items = count * windows;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  float* row = partial + size_t(chunk) * s.K * NT;
  for (int k = warp; k < s.K; k += warps) {
    float acc[NT];
#pragma unroll
    for (int v = 0; v < NT; ++v) acc[v] = 0.f;
    for (int it = lane; it < items; it += 32) {
      const int img = it / windows, win = it - img * windows;
      const int pp = win / Q2, pq = win - pp * Q2;
      const size_t o = (size_t(n0 + img) * s.K + k) * windows + win;
      const float g = dact_of_output(d, o);
      const int a = d.argmax[o], ai = a / pw, aj = a - ai * pw;
      // The conv output (pp * pw + ai, pq * pw + aj) reads staged rows and columns from there.
      const float* at = xs + img * st.plane + (pp * pw + ai) * st.stride + pq * pw + aj;
#pragma unroll
      for (int r = 0; r < F; ++r)
#pragma unroll
        for (int c = 0; c < F; ++c) acc[r * F + c] = fmaf(g, at[r * st.stride + c], acc[r * F + c]);
      acc[F * F] += g;
    }
#pragma unroll
    for (int v = 0; v < NT; ++v) {
      float t = acc[v];
      for (int off = 16; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off);
      if (lane == 0) row[k * NT + v] = t;
    }
  }
  if (!last_block_done(counter, unsigned(chunks))) return;
  for (int v = threadIdx.x; v < s.K * NT; v += blockDim.x) {
    const float sum = sum_rows_as(sum_loads, partial + v, chunks, size_t(s.K) * NT);
    const int k = v / NT, tap = v - k * NT;
    if (tap < F * F) {
      if (dw) dw[k * F * F + tap] = sum;
    } else if (db) {
      db[k] = sum;
    }
  }
}

}  // namespace

// The rule: a warp a filter up to eight warps (filters shared out evenly among them); images a
// block such that the chunks give about two blocks a multiprocessor, fewer where their staged
// images would not fit in the default shared memory (none fitting, no plan).
ArgmaxDwPlan plan_dw_argmax(const CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                            int chunks) {
  ArgmaxDwPlan p;
  const bool fits = s.C == 1 && s.stride == 1 && s.R == s.S && (s.R == 3 || s.R == 5) &&
                    epi.pool == PoolKind::Max && epi.pool_window == epi.pool_stride &&
                    s.P() >= epi.pool_window && s.Q() >= epi.pool_window && s.N > 0;
  if (!fits) return p;
  const long long plane = ArgmaxStage(s).plane;
  if (plane > kMaxStageFloats) return p;
  p.taps = s.R;
  const int per_warp = (s.K + kMaxWarps - 1) / kMaxWarps;  // filters a warp
  p.warps = (s.K + per_warp - 1) / per_warp;
  if (chunks > 0) {
    p.imgs = (s.N + chunks - 1) / chunks;
  } else {
    const long long blocks = 2LL * ctx.sm_count();
    p.imgs = int((s.N + blocks - 1) / blocks);
  }
  p.imgs = std::max(1, std::min<int>(p.imgs, int(kMaxStageFloats / plane)));
  p.chunks = (s.N + p.imgs - 1) / p.imgs;
  p.ok = true;
  return p;
}

void run_dw_argmax(CudaContext& ctx, const ArgmaxDwPlan& p, const Conv2dShape& s,
                   const DactSource& d, const ActIn& x, float* dw, float* db) {
  const int nt = p.taps * p.taps + 1;
  float* partial = ctx.scratch(size_t(p.chunks) * s.K * nt);
  unsigned* counter = ctx.counters(1);
  const size_t smem = size_t(p.imgs) * ArgmaxStage(s).plane * sizeof(float);
  const auto kernel = p.taps == 3 ? conv2d_dw_kernel_argmax<3> : conv2d_dw_kernel_argmax<5>;
  launch(ctx, "conv2d_dw_kernel_argmax", kernel, p.chunks, p.warps * 32, smem, s, d, x, partial,
         counter, dw, db, p.imgs, p.chunks, ctx.sum_loads());
}

}  // namespace pcnn::cuda
