// Convolution backward of the cuda backend: the kernels, the plan-taking launcher, and the ops
// conv2d_backward_data, conv2d_backward_weights and conv2d_fused_backward. The Tiled variant does
// the whole layer in one launch: weight-gradient blocks (a chunk of images x a tile of filters,
// reduced in registers, then summed over chunks by the tile's last block in a fixed order:
// deterministic, no float atomics) and data-gradient blocks (one image x a tile of channels, each
// thread owning its dx outputs and gathering over filters: contiguous writes, no scatter). Every
// block computes the d(pre-activation) it needs from dy and the kept indices while staging it.
#include <atomic>
#include <cstdint>

#include "backends/cuda/common.cuh"
#include "backends/cuda/conv2d.cuh"
#include "backends/cuda/conv2d_common.cuh"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/gemm.cuh"
#include "backends/cuda/launch.cuh"

namespace pcnn {

namespace cuda {

namespace {

// The default per-block limit (no opt-in needed) less room for the kernels' static shared memory.
constexpr int kMaxSmemFloats = (48 * 1024 - 256) / 4;
// What a data-gradient block may opt in to when its d(act_out) staging alone outgrows the
// default (32 filters of 10x10 outputs with the strip path's halo: 58 KB): two such blocks still
// fit an SM of Hopper or Ampere (228 / 164 KB), and the fused kernel runs one a SM anyway.
constexpr int kMaxOptInSmemFloats = (99 * 1024 - 256) / 4;
constexpr int kDxStrip = 7;  // dx outputs along w per thread (unit stride, 5x5): 14-wide rows = 2 strips
// 512 threads, 1 block/SM minimum: ptxas (CUDA 13) then allows 128 registers, and the
// register tiles of these kernels do not spill (it did with a bare 1024 or 512 bound).
constexpr int kMaxThreads = 512;
constexpr int kDwKTiles[] = {1, 2, 4, 6, 8, 16};  // instantiated filter tiles of the dw blocks
constexpr int kMaxTailFloats = 32768;  // most chunk sums one last block may have to add up

// ---- direct fallbacks (any shape) -----------------------------------------------------

// dy and what the forward kept -> dact (N,K,P,Q) = d(pre-activation), for the GEMM path
__global__ void conv2d_dact_kernel(Conv2dShape s, DactSource d, float* dact) {
  wait_for_previous_kernel();
  const int P = s.P(), Q = s.Q();
  const size_t total = size_t(s.N) * s.K * P * Q, stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int q = int(i % Q), p = int((i / Q) % P), k = int((i / (size_t(P) * Q)) % s.K);
    dact[i] = dact_at(s, d, int(i / (size_t(P) * Q * s.K)), k, p, q);
  }
}

// dact (N,K,P,Q) on the fly, w (K,C,R,S) -> dx (N,C,H,W); one thread per dx element
__global__ void conv2d_backward_data_kernel_direct(Conv2dShape s, DactSource d, const float* w,
                                                   float* dx) {
  wait_for_previous_kernel();
  const int P = s.P(), Q = s.Q();
  const size_t total = size_t(s.N) * s.C * s.H * s.W;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int wi = int(i % s.W), h = int((i / s.W) % s.H), c = int((i / (size_t(s.H) * s.W)) % s.C);
    const int n = int(i / (size_t(s.H) * s.W * s.C));
    float acc = 0.f;
    for (int k = 0; k < s.K; ++k)
      for (int r = 0; r < s.R; ++r) {
        const int ph = h + s.pad - r;
        if (ph < 0 || ph % s.stride) continue;
        const int p = ph / s.stride;
        if (p >= P) continue;
        for (int t = 0; t < s.S; ++t) {
          const int qw = wi + s.pad - t;
          if (qw < 0 || qw % s.stride) continue;
          const int q = qw / s.stride;
          if (q >= Q) continue;
          acc = fmaf(w[((size_t(k) * s.C + c) * s.R + r) * s.S + t], dact_at(s, d, n, k, p, q),
                     acc);
        }
      }
    dx[i] = acc;
  }
}

// x (N,C,H,W), dact on the fly -> dw (K,C,R,S), db (K); block = one weight (or one bias,
// item == C*R*S) summed over N*P*Q with a fixed-order block sum
__global__ void conv2d_backward_weights_kernel_direct(Conv2dShape s, DactSource d,
                                                      const float* x, float* dw, float* db) {
  wait_for_previous_kernel();
  __shared__ float red[32];
  const int crs = s.C * s.R * s.S, items = crs + 1;
  const int k = blockIdx.x / items, item = blockIdx.x % items;
  const bool is_bias = item == crs;
  if (is_bias ? !db : !dw) return;  // uniform per block: no thread reaches block_sum
  const int c = item / (s.R * s.S), r = (item / s.S) % s.R, t = item % s.S;
  const int P = s.P(), Q = s.Q();
  float acc = 0.f;
  for (int e = threadIdx.x; e < s.N * P * Q; e += blockDim.x) {
    const int q = e % Q, p = (e / Q) % P, n = e / (P * Q);
    const float g = dact_at(s, d, n, k, p, q);
    if (is_bias) {
      acc += g;
    } else {
      const int h = p * s.stride - s.pad + r, wi = q * s.stride - s.pad + t;
      if (h >= 0 && h < s.H && wi >= 0 && wi < s.W)
        acc = fmaf(g, x[((size_t(n) * s.C + c) * s.H + h) * s.W + wi], acc);
    }
  }
  const float total = block_sum(acc, red);
  if (threadIdx.x == 0) {
    if (is_bias) db[k] = total;
    else if (dw) dw[size_t(k) * crs + item] = total;
  }
}

// ---- the tiled, fused launch ----------------------------------------------------------

// Weight-gradient block: a group of staged images and their d(act_out). A thread item is one
// filter row (c, r) with all its TS taps (TS = S when the filter size is a compile-time
// constant: one x read then feeds KT*TS multiply-adds, sliding along q), or one tap (TS = 1).
struct DwLayout {
  int Hp, Wp, x_img, d_img, group, items, parts, red_floats, total;
  __host__ __device__ DwLayout(const Conv2dShape& s, int kt, int ts, int threads, int imgs) {
    Hp = s.H + 2 * s.pad;
    Wp = s.W + 2 * s.pad;
    x_img = s.C * Hp * Wp;
    d_img = kt * s.P() * s.Q();
    // As many images as fit are staged in one go: one memory latency per group, not per image.
    group = kMaxSmemFloats / (x_img + d_img);
    group = group > imgs ? imgs : (group < 1 ? 1 : group);
    items = s.C * s.R * (s.S / ts) + 1;  // filter rows (or taps), plus the bias
    parts = threads / items;
    red_floats = parts * items * kt * ts;
    const int staged = group * (x_img + d_img);
    total = staged > red_floats ? staged : red_floats;
  }
};

// Data-gradient block: d(act_out) of all K filters, then the filters of the channel tile. The
// strip path (unit stride, 5x5) reads d(act_out) through an (R-1, S-1) zero halo plus a few
// columns of slack, so it needs no bounds checks; the general path checks bounds itself and
// stages d(act_out) without a halo (stride 2 layers would otherwise waste most of the space).
__host__ __device__ inline bool dx_strip_path(const Conv2dShape& s) {
  return s.stride == 1 && s.R == 5 && s.S == 5;
}

struct DxLayout {
  int hr, hs, Ph, Qh, d_floats, w_floats, total;
  __host__ __device__ DxLayout(const Conv2dShape& s, int ct) {
    const bool strip = dx_strip_path(s);
    hr = strip ? s.R - 1 : 0;
    hs = strip ? s.S - 1 : 0;
    Ph = s.P() + 2 * hr;
    Qh = s.Q() + 2 * hs + (strip ? kDxStrip : 0);  // slack: a strip's last segment stays in its row
    d_floats = s.K * Ph * Qh;
    w_floats = s.K * ct * s.R * s.S;
    total = d_floats + w_floats;
  }
};

struct FusedArgs {
  Conv2dShape s;
  DactSource d;
  const float* x;
  const float* w;
  float* dx;
  float* dw;
  float* db;
  float* partial;     // (ktiles, chunks, items, kt) chunk sums
  unsigned* counter;  // (ktiles), zero on entry and on exit
  int dw_blocks, chunks, imgs_per_chunk, ktiles;
  int ct, ctiles;
};

// Whole block: image n, zero-padded, into xs (C, Hp, Wp) by cp.async.
__device__ __forceinline__ void stage_padded_image(const Conv2dShape& s, const float* x, int n,
                                                   int Hp, int Wp, float* xs) {
  const float* xn = x + size_t(n) * s.C * s.H * s.W;
  for (int e = threadIdx.x; e < s.C * Hp * Wp; e += blockDim.x) {
    const int ww = e % Wp, hh = (e / Wp) % Hp, c = e / (Wp * Hp);
    const int h = hh - s.pad, wi = ww - s.pad;
    if (h >= 0 && h < s.H && wi >= 0 && wi < s.W) copy_async(xs + e, xn + (size_t(c) * s.H + h) * s.W + wi);
    else xs[e] = 0.f;
  }
}

// One weight-gradient block: images of chunk `chunk`, filters [k0, k0+KT). Thread = (item,
// part): it sums its filter row (or tap) over the rows (image, p) = part, part+parts, ... of each
// staged group, for KT filters at once.
template <int KT, int TS, bool kUnitStride>
__device__ __forceinline__ void backward_weights_block(const FusedArgs& a, int chunk, int kt_idx,
                                                       float* smem) {
  const Conv2dShape& s = a.s;
  const DwLayout L(s, KT, TS, blockDim.x, a.imgs_per_chunk);
  const int P = s.P(), Q = s.Q(), st = s.stride, k0 = kt_idx * KT, PQ = P * Q;
  float* xs = smem;
  float* ds = smem + L.group * L.x_img;
  const int item = threadIdx.x % L.items, part = threadIdx.x / L.items;
  const bool active = part < L.parts;
  const bool is_bias = item == L.items - 1;
  const int tgroups = s.S / TS;
  const int c = item / (s.R * tgroups), r = (item / tgroups) % s.R, t0 = (item % tgroups) * TS;
  const int xoff = is_bias ? 0 : (c * L.Hp + r) * L.Wp + t0;
  float acc[KT][TS];
#pragma unroll
  for (int kk = 0; kk < KT; ++kk)
#pragma unroll
    for (int u = 0; u < TS; ++u) acc[kk][u] = 0.f;

  const int n_end = min(s.N, (chunk + 1) * a.imgs_per_chunk);
  for (int g0 = chunk * a.imgs_per_chunk; g0 < n_end; g0 += L.group) {
    const int gn = min(L.group, n_end - g0);
    __syncthreads();  // the previous group is no longer read
    for (int i = 0; i < gn; ++i) stage_padded_image(s, a.x, g0 + i, L.Hp, L.Wp, xs + i * L.x_img);
    for (int i = 0; i < gn; ++i) stage_dact(s, a.d, g0 + i, k0, KT, ds + i * L.d_img, PQ, Q);
    copy_async_wait();
    __syncthreads();
    if (!active) continue;
    for (int row = part; row < gn * P; row += L.parts) {
      const int i = row / P, p = row % P;
      const float* drow = ds + i * L.d_img + p * Q;
      if (is_bias) {
        for (int q = 0; q < Q; ++q)
#pragma unroll
          for (int kk = 0; kk < KT; ++kk) acc[kk][0] += drow[kk * PQ + q];
        continue;
      }
      const float* xrow = xs + i * L.x_img + xoff + p * st * L.Wp;
      float xw[TS];
      if (kUnitStride) {  // the window slides by one: one new x per q
#pragma unroll
        for (int u = 1; u < TS; ++u) xw[u] = xrow[u - 1];
      }
      for (int q = 0; q < Q; ++q) {
        if (kUnitStride) {
#pragma unroll
          for (int u = 0; u + 1 < TS; ++u) xw[u] = xw[u + 1];
          xw[TS - 1] = xrow[q + TS - 1];
        } else {
#pragma unroll
          for (int u = 0; u < TS; ++u) xw[u] = xrow[q * st + u];
        }
#pragma unroll
        for (int kk = 0; kk < KT; ++kk) {
          const float dv = drow[kk * PQ + q];
#pragma unroll
          for (int u = 0; u < TS; ++u) acc[kk][u] = fmaf(dv, xw[u], acc[kk][u]);
        }
      }
    }
  }
  // Sum the parts in a fixed order, then publish this chunk's sums as (tap, filter) pairs.
  __syncthreads();
  float* red = smem;
  if (active)
#pragma unroll
    for (int kk = 0; kk < KT; ++kk)
#pragma unroll
      for (int u = 0; u < TS; ++u) red[((part * L.items + item) * KT + kk) * TS + u] = acc[kk][u];
  __syncthreads();
  const int crs = s.C * s.R * s.S, per_tile = (crs + 1) * KT, per_part = L.items * KT * TS;
  float* out = a.partial + (size_t(kt_idx) * a.chunks + chunk) * per_tile;
  for (int e = threadIdx.x; e < per_tile; e += blockDim.x) {
    const int it = e / KT, kk = e % KT;
    int src;  // (item, kk, u) of tap `it`
    if (it < crs) {
      const int tc = it / (s.R * s.S), tr = (it / s.S) % s.R, tt = it % s.S;
      src = (((tc * s.R + tr) * tgroups + tt / TS) * KT + kk) * TS + tt % TS;
    } else {
      src = ((L.items - 1) * KT + kk) * TS;
    }
    float v = 0.f;
    for (int pt = 0; pt < L.parts; ++pt) v += red[pt * per_part + src];
    out[e] = v;
  }
  // The last chunk block of this filter tile to finish sums all chunks (chunk order).
  __threadfence();
  __syncthreads();
  __shared__ bool is_last;
  if (threadIdx.x == 0) is_last = atomicAdd(&a.counter[kt_idx], 1u) == unsigned(a.chunks - 1);
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  const float* all = a.partial + size_t(kt_idx) * a.chunks * per_tile;
  for (int e = threadIdx.x; e < per_tile; e += blockDim.x) {
    // Eight running sums keep eight loads in flight; the order is still fixed.
    float v[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    int ch = 0;
    for (; ch + 8 <= a.chunks; ch += 8)
#pragma unroll
      for (int u = 0; u < 8; ++u) v[u] += __ldcg(all + size_t(ch + u) * per_tile + e);
    for (; ch < a.chunks; ++ch) v[0] += __ldcg(all + size_t(ch) * per_tile + e);
    const float sum = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
    const int it = e / KT, k = k0 + e % KT;
    if (k >= s.K) continue;
    if (it < crs) {
      if (a.dw) a.dw[size_t(k) * crs + it] = sum;
    } else if (a.db) {
      a.db[k] = sum;
    }
  }
  if (threadIdx.x == 0) a.counter[kt_idx] = 0u;  // ready for the next launch (graph replays)
}

// One data-gradient block: image n, channels [c0, c0+ct). Each thread owns its dx outputs and
// gathers over filters and taps from the halo-padded d(act_out): no scatter, no atomics.
// Unit stride with a known filter size: a thread owns kDxStrip outputs along w and slides a
// register row segment, (kDxStrip + S - 1) + S shared loads for kDxStrip*S multiply-adds
// (instead of 2 per multiply-add). Otherwise one output per thread, and the stride checks
// (integer divisions) are done once per tap, outside the loop over filters.
template <bool kUnitStride, int RS>
__device__ __forceinline__ void backward_data_block(const FusedArgs& a, int n, int c0, float* smem) {
  const Conv2dShape& s = a.s;
  const int R = RS ? RS : s.R, S = RS ? RS : s.S;
  const DxLayout L(s, a.ct);
  const int P = s.P(), Q = s.Q();
  float* ds = smem;
  float* ws = smem + L.d_floats;
  for (int e = threadIdx.x; e < L.d_floats; e += blockDim.x) {  // zero the halo and slack
    const int qh = e % L.Qh, ph = (e / L.Qh) % L.Ph;
    if (ph < L.hr || ph >= P + L.hr || qh < L.hs || qh >= Q + L.hs) ds[e] = 0.f;
  }
  stage_dact(s, a.d, n, 0, s.K, ds + L.hr * L.Qh + L.hs, L.Ph * L.Qh, L.Qh);
  const int rs = R * S;
  for (int e = threadIdx.x; e < L.w_floats; e += blockDim.x) {
    const int k = e / (a.ct * rs), cc = (e / rs) % a.ct, c = c0 + cc;
    if (c < s.C) copy_async(ws + e, a.w + (size_t(k) * s.C + c) * rs + e % rs);
    else ws[e] = 0.f;
  }
  copy_async_wait();
  __syncthreads();
  const int plane = L.Ph * L.Qh;
  if constexpr (kUnitStride && RS == 5) {  // == dx_strip_path(s): see launch_fused_rs
    constexpr int WS = kDxStrip;
    const int strips = (s.W + WS - 1) / WS;
    for (int e = threadIdx.x; e < a.ct * s.H * strips; e += blockDim.x) {
      const int cc = e / (s.H * strips), h = (e / strips) % s.H, w0 = (e % strips) * WS;
      const int c = c0 + cc;
      if (c >= s.C) break;
      float acc[WS];
#pragma unroll
      for (int j = 0; j < WS; ++j) acc[j] = 0.f;
      // Row of tap r = 0: p + R - 1 = h + pad + R - 1; columns from w0 + pad (see DxLayout).
      const float* d0 = ds + (h + s.pad + R - 1) * L.Qh + w0 + s.pad;
      for (int k = 0; k < s.K; ++k) {
        const float* wk = ws + (k * a.ct + cc) * rs;
        const float* dk = d0 + k * plane;
#pragma unroll
        for (int r = 0; r < R; ++r) {
          float seg[WS + RS - 1];
#pragma unroll
          for (int m = 0; m < WS + S - 1; ++m) seg[m] = dk[m - r * L.Qh];
#pragma unroll
          for (int t = 0; t < S; ++t) {
            const float wv = wk[r * S + t];
#pragma unroll
            for (int j = 0; j < WS; ++j) acc[j] = fmaf(wv, seg[j + S - 1 - t], acc[j]);
          }
        }
      }
      float* out = a.dx + ((size_t(n) * s.C + c) * s.H + h) * s.W + w0;
#pragma unroll
      for (int j = 0; j < WS; ++j)
        if (w0 + j < s.W) out[j] = acc[j];
    }
    return;
  }
  // Any stride: dx (h, w) gathers the taps r = (h + pad) mod stride, + stride, ... (and likewise
  // t), so the plane is walked class by class of ((h + pad) mod stride, (w + pad) mod stride):
  // neighbouring threads share one tap set and run the filter loop together, where walking it
  // row by row left each tap to a quarter of a warp at stride 2 (H200, Simard conv2 at N=1024:
  // 0.5 ms of a 0.93 ms step). Taps are still visited in ascending (r, t): same sums as before.
  const int hw = s.H * s.W, st = s.stride;
  for (int e = threadIdx.x; e < a.ct * hw; e += blockDim.x) {
    const int cc = e / hw, c = c0 + cc;
    if (c >= s.C) break;
    int rem = e % hw, ah = 0, aw = 0, h = -1, wi = 0;
    for (ah = 0; ah < st && h < 0; ++ah) {  // find the class holding plane item `rem`
      const int h0 = ((ah - s.pad) % st + st) % st;  // first h with (h + pad) % st == ah
      const int nh = h0 < s.H ? (s.H - 1 - h0) / st + 1 : 0;
      for (aw = 0; aw < st; ++aw) {
        const int w0 = ((aw - s.pad) % st + st) % st;
        const int nw = w0 < s.W ? (s.W - 1 - w0) / st + 1 : 0;
        if (rem < nh * nw) {
          h = h0 + st * (rem / nw);
          wi = w0 + st * (rem % nw);
          break;
        }
        rem -= nh * nw;
      }
    }
    --ah;  // the loop stepped past the class it found
    float acc = 0.f;
    // Tap r = ah + m * st reads output row p0 - m (and likewise for t, q).
    const int p0 = (h + s.pad - ah) / st, q0 = (wi + s.pad - aw) / st;
    for (int r = ah, p = p0; r < R && p >= 0; r += st, --p) {
      if (p >= P) continue;
      for (int t = aw, q = q0; t < S && q >= 0; t += st, --q) {
        if (q >= Q) continue;
        const float* wp = ws + (cc * R + r) * S + t;
        const float* dp = ds + (p + L.hr) * L.Qh + q + L.hs;
        for (int k = 0; k < s.K; ++k) acc = fmaf(wp[k * a.ct * rs], dp[k * plane], acc);
      }
    }
    a.dx[((size_t(n) * s.C + c) * s.H + h) * s.W + wi] = acc;
  }
}

template <int KT, bool kUnitStride, int RS>
__global__ void __launch_bounds__(kMaxThreads, 1) conv2d_backward_kernel_fused(FusedArgs a) {
  wait_for_previous_kernel();
  extern __shared__ float smem[];
  if (int(blockIdx.x) < a.dw_blocks) {
    backward_weights_block<KT, RS ? RS : 1, kUnitStride>(a, blockIdx.x % a.chunks,
                                                       blockIdx.x / a.chunks, smem);
  } else {
    const int b = blockIdx.x - a.dw_blocks;
    backward_data_block<kUnitStride, RS>(a, b / a.ctiles, (b % a.ctiles) * a.ct, smem);
  }
}

// ---- planning -------------------------------------------------------------------------

struct FusedPlan {
  bool ok = false;
  int kt = 1, ktiles = 0, chunks = 0, imgs = 0, dw_blocks = 0, threads = 256;
  int ct = 1, ctiles = 0, dx_blocks = 0, smem_floats = 0;
};

FusedPlan plan_fused(CudaContext& ctx, const Conv2dShape& s, bool want_dw, bool want_dx,
                     const ConvBackwardPlan& plan) {
  FusedPlan f;
  // What a block may use here: the default, or the opt-in where the device offers it.
  const int smem_limit =
      ctx.smem_optin_floats() >= kMaxOptInSmemFloats ? kMaxOptInSmemFloats : kMaxSmemFloats;
  const int items = s.C * s.R * s.S + 1;  // chunk sums per filter: every tap plus the bias
  if (s.C * s.R * s.S / ((s.R == 5 && s.S == 5) ? 5 : 1) + 1 > kMaxThreads) return f;
  if (want_dw) {
    // Chunks per filter tile: about one block per multiprocessor in all, but few enough that
    // the last block's sum over chunks (one block per tile) stays short.
    auto chunks_for = [&](int kt) {
      const int per_tile = items * kt, ktiles = ceil_div(s.K, kt);
      int c = plan.dw_chunks ? plan.dw_chunks : ceil_div(ctx.sm_count(), ktiles);
      if (!plan.dw_chunks && c > kMaxTailFloats / per_tile) c = kMaxTailFloats / per_tile;
      c = c < 1 ? 1 : (c > s.N ? s.N : c);
      return ceil_div(s.N, ceil_div(s.N, c));  // chunks of equal size
    };
    // Filter tile: the largest instantiated one (from the smallest covering K down) that
    // still gives most multiprocessors a block.
    if (plan.dw_k_tile) {
      f.kt = plan.dw_k_tile;
    } else {
      int i = 0;
      while (i < 5 && kDwKTiles[i] < s.K) ++i;
      while (i > 0 && 4 * ceil_div(s.K, kDwKTiles[i]) * chunks_for(kDwKTiles[i]) < 3 * ctx.sm_count())
        --i;
      // 16 filters x 5 taps of accumulators spill (ptxas, sm_90): stop at 8 for 5x5 filters.
      if (kDwKTiles[i] == 16 && s.R == 5 && s.S == 5) --i;
      f.kt = kDwKTiles[i];
    }
    bool known = false;
    for (int k : kDwKTiles) known |= k == f.kt;
    if (!known) return f;
    f.ktiles = ceil_div(s.K, f.kt);
    f.imgs = ceil_div(s.N, chunks_for(f.kt));
    f.chunks = ceil_div(s.N, f.imgs);
    f.dw_blocks = f.ktiles * f.chunks;
    if (f.ktiles > int(CudaContext::kCounters)) return f;
    // Parts: split the (image, row) pairs of a chunk so a block has up to 512 threads busy,
    // as far as the per-part sums fit in shared memory.
    const int ts = (s.R == 5 && s.S == 5) ? 5 : 1;  // as the kernels are instantiated
    const int witems = s.C * s.R * (s.S / ts) + 1;
    int parts = kMaxThreads / witems;
    const int rows = f.imgs * s.P();
    if (parts > rows) parts = rows;
    if (parts > kMaxSmemFloats / (witems * f.kt * ts)) parts = kMaxSmemFloats / (witems * f.kt * ts);
    if (parts < 1) return f;
    f.threads = witems * parts;
    // Rounding up to whole warps must not add a part whose sums would not fit.
    const int rounded = (f.threads + 31) / 32 * 32;
    if ((rounded / witems) * witems * f.kt * ts <= kMaxSmemFloats) f.threads = rounded;
    f.smem_floats = DwLayout(s, f.kt, ts, f.threads, f.imgs).total;
  }
  if (want_dx) {
    int ctiles = plan.dx_c_tiles ? plan.dx_c_tiles : ceil_div(2 * ctx.sm_count(), s.N);
    ctiles = ctiles < 1 ? 1 : (ctiles > s.C ? s.C : ctiles);
    // The widest channel tile, halving from the one asked for, whose block fits `limit`.
    const auto tile_within = [&](int limit) {
      int ct = ceil_div(s.C, ctiles);
      while (DxLayout(s, ct).total > limit && ct > 1) ct = ceil_div(ct, 2);
      return ct;
    };
    f.ct = tile_within(kMaxSmemFloats);
    // Too many filters for the default: opt in, with the channel tile the opt-in allows (each
    // block stages all of an image's d(act_out), so a wide tile shares it among more channels).
    if (DxLayout(s, f.ct).total > kMaxSmemFloats && smem_limit > kMaxSmemFloats)
      f.ct = tile_within(smem_limit);
    f.ctiles = ceil_div(s.C, f.ct);
    f.dx_blocks = s.N * f.ctiles;
    const int dx_floats = DxLayout(s, f.ct).total;
    if (dx_floats > f.smem_floats) f.smem_floats = dx_floats;
  }
  f.ok = f.smem_floats <= smem_limit;
  return f;
}

template <int KT, bool kUnit, int RS>
void launch_fused(CudaContext& ctx, const FusedPlan& f, const FusedArgs& a) {
  const size_t smem = size_t(f.smem_floats) * sizeof(float);
  const int blocks = f.dw_blocks + f.dx_blocks;
  if (f.smem_floats > kMaxSmemFloats) {
    // Past the default the kernel must be allowed more, once per device (a function attribute
    // of the device's context, not a stream operation); plan_fused checked that the device has it.
    static std::atomic<uint64_t> allowed{0};  // bit d: done on device d
    const uint64_t bit = ctx.device() < 64 ? uint64_t(1) << ctx.device() : 0;
    if (!bit || !(allowed.load() & bit)) {
      PCNN_CUDA_CHECK(cudaFuncSetAttribute(conv2d_backward_kernel_fused<KT, kUnit, RS>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           kMaxOptInSmemFloats * int(sizeof(float))));
      allowed.fetch_or(bit);
    }
  }
  launch(ctx, "conv2d_backward_kernel_fused", conv2d_backward_kernel_fused<KT, kUnit, RS>, blocks,
         f.threads, smem, a);
}

template <int KT, bool kUnit>
void launch_fused_rs(CudaContext& ctx, const FusedPlan& f, const FusedArgs& a) {
  if (a.s.R == 5 && a.s.S == 5) launch_fused<KT, kUnit, 5>(ctx, f, a);
  else launch_fused<KT, kUnit, 0>(ctx, f, a);
}

template <int KT>
void launch_fused_kt(CudaContext& ctx, const FusedPlan& f, const FusedArgs& a) {
  if (a.s.stride == 1) launch_fused_rs<KT, true>(ctx, f, a);
  else launch_fused_rs<KT, false>(ctx, f, a);
}

void run_fused(CudaContext& ctx, const FusedPlan& f, const Conv2dShape& s, const DactSource& d,
               const float* x, const float* w, float* dx, float* dw, float* db) {
  FusedArgs a{s, d, x, w, dx, dw, db, nullptr, nullptr, f.dw_blocks, f.chunks ? f.chunks : 1,
              f.imgs, f.ktiles, f.ct, f.ctiles ? f.ctiles : 1};
  if (f.dw_blocks) {
    const size_t per_tile = size_t(s.C * s.R * s.S + 1) * f.kt;
    a.partial = ctx.scratch(size_t(f.ktiles) * f.chunks * per_tile);
    a.counter = ctx.counters(f.ktiles);
  }
  switch (f.kt) {
    case 1: launch_fused_kt<1>(ctx, f, a); break;
    case 2: launch_fused_kt<2>(ctx, f, a); break;
    case 4: launch_fused_kt<4>(ctx, f, a); break;
    case 6: launch_fused_kt<6>(ctx, f, a); break;
    case 8: launch_fused_kt<8>(ctx, f, a); break;
    default: launch_fused_kt<16>(ctx, f, a); break;
  }
}

void run_direct(CudaContext& ctx, const Conv2dShape& s, const DactSource& d, const float* x,
                const float* w, float* dx, float* dw, float* db) {
  if (dw || db) {
    const int blocks = s.K * (s.C * s.R * s.S + 1);
    launch(ctx, "conv2d_backward_weights_kernel_direct", conv2d_backward_weights_kernel_direct,
           blocks, 256, 0, s, d, x, dw, db);
  }
  if (dx) {
    launch(ctx, "conv2d_backward_data_kernel_direct", conv2d_backward_data_kernel_direct,
           grid_for(s.x_size(), 256, ctx.sm_count()), 256, 0, s, d, w, dx);
  }
}

bool dact_foldable(const ConvEpilogue& epi) {
  return epi.pool == PoolKind::None || epi.pool_window == epi.pool_stride;
}

}  // namespace

bool conv2d_backward_supported(CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                               bool want_dx, const ConvBackwardPlan& plan) {
  if (plan.variant != ConvBwdVariant::Tiled) return true;
  return dact_foldable(epi) && plan_fused(ctx, s, true, want_dx, plan).ok;
}

void conv2d_fused_backward(CudaBackend& be, const Conv2dShape& s, const ConvEpilogue& epi,
                           const float* x, const float* w, const ConvKept& kept, const float* y,
                           const float* dy, float* dact_scratch, float* dx, float* dw, float* db,
                           const ConvBackwardPlan& plan) {
  const bool want_dw = dw || db;
  if (s.N == 0) {  // empty sums
    if (dw) be.fill(dw, 0.f, s.w_size());
    if (db) be.fill(db, 0.f, size_t(s.K));
    return;
  }
  CudaContext& ctx = be.context();
  DactSource d{dy, y, kept.argmax, kept.act_out, epi.act, epi.pool, epi.pool_window};
  const float* dact = nullptr;  // d(pre-activation) in memory, once something has materialised it
  if (!dact_foldable(epi)) {
    // Overlapping windows: materialise d(pre-activation) first (pool backward, then the
    // activation), outside scratch(), which the fused and GEMM paths use for their partial sums.
    float* tmp = dact_scratch ? dact_scratch : ctx.scratch_aux(s.y_size());
    const Pool2dShape ps = pooled_shape(s, epi);
    if (epi.pool == PoolKind::Max) {
      be.max_pool_backward_argmax(ps, epi.act, kept.argmax, y, dy, tmp);
    } else {  // avg reads no x: tmp stands in for it when no act_out is kept
      be.pool2d_backward(epi.pool, ps, kept.act_out ? kept.act_out : tmp, dy, tmp);
      if (epi.act != Activation::None)
        be.activation_backward(epi.act, s.y_size(), kept.act_out, tmp, tmp);
    }
    d = DactSource{tmp, nullptr, nullptr, nullptr, Activation::None, PoolKind::None, 1};
    dact = tmp;
  }
  if (plan.variant == ConvBwdVariant::Auto || plan.variant == ConvBwdVariant::Tiled) {
    const FusedPlan f = plan_fused(ctx, s, want_dw, dx != nullptr, plan);
    if (f.ok) {
      run_fused(ctx, f, s, d, x, w, dx, dw, db);
      return;
    }
    PCNN_CHECK(plan.variant == ConvBwdVariant::Auto,
               "cuda conv2d backward: the Tiled variant does not fit this shape");
  }
  if (plan.variant == ConvBwdVariant::Direct) {
    run_direct(ctx, s, d, x, w, dx, dw, db);
    return;
  }
  if (!dact) {
    if (d.pool == PoolKind::None && d.act == Activation::None) {
      dact = dy;
    } else {
      float* buf = dact_scratch ? dact_scratch : ctx.scratch_aux(s.y_size());
      launch(ctx, "conv2d_dact_kernel", conv2d_dact_kernel,
             grid_for(s.y_size(), 256, ctx.sm_count()), 256, 0, s, d, buf);
      dact = buf;
    }
  }
  conv2d_backward_gemm(ctx, s, dact, x, w, dx, dw, db);
}

}  // namespace cuda

void CudaBackend::conv2d_backward_data(const Conv2dShape& s, const float* dy, const float* w,
                                       float* dx) {
  ctx_.bind();
  cuda::conv2d_fused_backward(*this, s, ConvEpilogue{}, nullptr, w, ConvKept{}, nullptr, dy,
                              nullptr, dx, nullptr, nullptr, cuda::ConvBackwardPlan{});
}

void CudaBackend::conv2d_backward_weights(const Conv2dShape& s, const float* x, const float* dy,
                                          float* dw, float* db) {
  ctx_.bind();
  cuda::conv2d_fused_backward(*this, s, ConvEpilogue{}, x, nullptr, ConvKept{}, nullptr, dy,
                              nullptr, nullptr, dw, db, cuda::ConvBackwardPlan{});
}

void CudaBackend::conv2d_fused_backward(const Conv2dShape& s, const ConvEpilogue& epi,
                                        const float* x, const float* w, const ConvKept& kept,
                                        const float* y, const float* dy, float* scratch, float* dx,
                                        float* dw, float* db) {
  ctx_.bind();
  cuda::conv2d_fused_backward(*this, s, epi, x, w, kept, y, dy, scratch, dx, dw, db,
                              cuda::ConvBackwardPlan{});
}

}  // namespace pcnn
