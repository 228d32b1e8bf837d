// Convolution forward of the strip layers (conv2d_strip.cuh: 5x5 at unit stride, 2x2 pooling; any
// channel count): a thread computes KPT filters over a strip of WT pooled outputs of one pooled
// row, i.e. 2 conv rows x 2*WT conv columns, from registers. Channel by channel, each of the 6
// input rows those need is read once, from the block's images in shared memory, into 2*WT+4
// registers and used by every tap of both conv rows: per row 2*WT+4 loads for up to
// 2*5*KPT*2*WT multiply-adds. The Tiled and Ring kernels issue a shared load per 2-4
// multiply-adds and leave a quarter of LeNet-5's six conv1 filters idle in their tile of 8.
//
// Sums in the Tiled kernel's order (bias, then channel by channel the taps row by row, left to
// right), so y is the same to the bit; a row of padding is skipped where those add w * 0.
#pragma once

#include <cuda_runtime.h>

#include "backends/cuda/act_io.cuh"
#include "backends/cuda/conv2d_forward_out.cuh"
#include "backends/cuda/conv2d_strip.cuh"
#include "backends/cuda/launch.cuh"
#include "core/shapes.hpp"

namespace pcnn::cuda {

// A strip launch's shared memory: its filters and biases, KPT-padded (zeros past K), each warp's
// pooled outputs and argmax bytes on their way out (strip_out_floats), then the images a block of
// up to 128 items meets (StripStage).
constexpr int kStripWarps = 4;  // warps a block at most (blocks of 128 or 64 threads)
__host__ __device__ constexpr int strip_out_floats(int wt) { return 32 * wt + 8 * wt; }
struct StripLayout {
  int groups, per_image, w_floats, out_at, total;
  __host__ __device__ StripLayout(const Conv2dShape& s, int kpt, int wt) {
    groups = (s.K + kpt - 1) / kpt;
    per_image = groups * int(strip_items_per_plane(s, wt));
    w_floats = groups * kpt * s.C * 25;
    out_at = w_floats + groups * kpt;
    total = out_at + kStripWarps * strip_out_floats(wt);
  }
  // ... plus the images (host: the launch's size).
  long long with_images(const Conv2dShape& s, int wt) const {
    return total + strip_stage_images(s, per_image, 128) * s.C * StripStage(s, wt).plane;
  }
};

// Whether a launch can hand its pooled outputs out a warp at a time (`coalesce`): with one filter
// a thread and whole strips, item i's WT outputs are y[i * WT ...], so a warp's are one run, which
// it stores in 32-wide rows from shared memory instead of each thread's WT outputs WT words apart
// from its neighbours' (ncu, H100, LeNet-5 at 1024: 4.6-6.4 of each 32-byte sector written used).
inline bool strip_can_coalesce(const Conv2dShape& s, int kpt, int wt, const FwdOut& o) {
  return kpt == 1 && (s.Q() / 2) % wt == 0 && o.act_out == nullptr;
}

// One warp's pooled outputs, the coalesced way (strip_can_coalesce): each lane's WT windows
// pooled into shared memory (lane * WT + jj: WT is odd, so no two lanes share a bank), then the
// warp's run y[w0 * WT ...] of up to 32 items written 32 words a row. Every lane of the warp
// calls it; lanes past the end of the launch (`items`) only help store.
template <int WT>
__device__ __forceinline__ void store_strip_warp(const FwdOut& o, const float (&acc)[2][2 * WT],
                                                 float* ys, uint8_t* as, int lane, long long w0,
                                                 long long items) {
  dispatch_activation(o.act, [&](auto tag) {
#pragma unroll
    for (int jj = 0; jj < WT; ++jj) {
      const float win[2][2] = {{acc[0][2 * jj], acc[0][2 * jj + 1]},
                               {acc[1][2 * jj], acc[1][2 * jj + 1]}};
      int best;
      const float pooled = pool_window_as<decltype(tag)::value, 2>(o, 0, 0, win, best);
      ys[lane * WT + jj] = o.pool == PoolKind::Max ? pooled : pooled * 0.25f;
      as[lane * WT + jj] = uint8_t(best);
    }
  });
  __syncwarp();
  const long long count = (items - w0 < 32 ? items - w0 : 32) * WT;
  for (int e = lane; e < count; e += 32) {
    o.y.store(size_t(w0 * WT + e), ys[e]);
    if (o.pool == PoolKind::Max) o.argmax[w0 * WT + e] = as[e];
  }
  __syncwarp();
}

// x (N,C,H,W), w (K,C,5,5) -> y (N,K,P/2,Q/2) and what FwdOut keeps. Thread item (n, g, pp,
// strip), the strip fastest: a block's items cover one image or a few, staged in shared memory
// once for all of them (every channel), a warp's row loads falling on distinct banks. ONE: C is 1
// (a grey image's first layer), the channel loop compiled away: 128 registers with 2 filters of
// 7 columns where the loop takes 168. coalesce: strip_can_coalesce held and the context asked
// for it (unless PCNN_STRIP_STORE=0). MINB: blocks a multiprocessor its registers leave room for.
template <int KPT, int WT, bool ONE, int MINB = 1>
__global__ void __launch_bounds__(128, MINB)
    conv2d_forward_kernel_strip(Conv2dShape s, ActIn x, const float* w, FwdOut o, bool coalesce) {
  wait_for_previous_kernel();
  extern __shared__ float smem[];
  constexpr int CW = 2 * WT, XW = CW + 4;  // conv columns, input columns of a strip
  const StripLayout L(s, KPT, WT);
  const StripStage st(s, WT);
  float* ws = smem;
  float* bs = ws + L.w_floats;
  float* xs = smem + L.total;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float* ys = smem + L.out_at + warp * strip_out_floats(WT);      // 32 * WT pooled outputs
  uint8_t* as = reinterpret_cast<uint8_t*>(ys + 32 * WT);         // ... and their argmax bytes
  for (int e = threadIdx.x; e < L.w_floats; e += blockDim.x)
    ws[e] = e < s.K * s.C * 25 ? w[e] : 0.f;
  for (int e = threadIdx.x; e < L.groups * KPT; e += blockDim.x)
    bs[e] = (o.bias && e < s.K) ? o.bias[e] : 0.f;

  const int P2 = s.P() / 2, Q2 = s.Q() / 2, strips = (Q2 + WT - 1) / WT;
  const int C = ONE ? 1 : s.C, fw = C * 25;  // channels, floats a filter
  const long long items = (long long)s.N * L.per_image;
  // Block-uniform passes (each stages its images, so every thread takes part).
  for (long long base = (long long)blockIdx.x * blockDim.x; base < items;
       base += (long long)gridDim.x * blockDim.x) {
    const int n_lo = int(base / L.per_image);
    const long long last = base + blockDim.x - 1 < items ? base + blockDim.x - 1 : items - 1;
    __syncthreads();  // the last pass's reads are done
    stage_padded_images(s, x, n_lo, int(last / L.per_image) - n_lo + 1, st.rows, st.stride, xs);
    copy_async_wait();
    __syncthreads();
    const long long item = base + threadIdx.x;
    const bool valid = item < items;
    if (!valid && !coalesce) continue;
    const long long at = valid ? item : items - 1;  // a lane past the end computes the last item
    const int strip = int(at % strips), pp = int((at / strips) % P2);
    const int g = int((at / (strips * P2)) % L.groups), n = int(at / L.per_image);
    const float* xn = xs + size_t(n - n_lo) * C * st.plane;
    float acc[KPT][2][CW];
#pragma unroll
    for (int kk = 0; kk < KPT; ++kk)
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < CW; ++j) acc[kk][i][j] = bs[g * KPT + kk];
#pragma unroll 1
    for (int c = 0; c < C; ++c) {
      const float* wc = ws + g * KPT * fw + c * 25;
      walk_strip_rows<XW>(s, st, xn + c * st.plane, pp, strip,
                          [&](int i, int r, const float (&xr)[XW]) {
#pragma unroll
                            for (int t = 0; t < 5; ++t)
#pragma unroll
                              for (int kk = 0; kk < KPT; ++kk) {
                                const float wv = wc[kk * fw + r * 5 + t];
#pragma unroll
                                for (int j = 0; j < CW; ++j)
                                  acc[kk][i][j] = fmaf(wv, xr[j + t], acc[kk][i][j]);
                              }
                          });
    }
    if (coalesce) {
      store_strip_warp<WT>(o, acc[0], ys, as, lane, base + warp * 32, items);
      continue;
    }
#pragma unroll
    for (int jj = 0; jj < WT; ++jj) {
      const int pq = strip * WT + jj;
      if (pq >= Q2) break;
      float a[KPT][2][2];
#pragma unroll
      for (int kk = 0; kk < KPT; ++kk)
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          a[kk][i][0] = acc[kk][i][2 * jj];
          a[kk][i][1] = acc[kk][i][2 * jj + 1];
        }
      forward_epilogue<KPT, 2>(s, o, n, g * KPT, pp, pq, a);
    }
  }
}

}  // namespace pcnn::cuda
