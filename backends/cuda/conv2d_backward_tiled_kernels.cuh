// The kernels of the Tiled and Split convolution backward (see conv2d_backward.cu for what
// the variants do): the weight-gradient and data-gradient blocks, the fused kernel that runs
// both kinds in one launch, the data-gradient kernel of the Split variant, and their launchers.
// Included only by the files that instantiate them.
#pragma once

#include <cstdint>

#include "backends/cuda/common.cuh"
#include "backends/cuda/conv2d_backward_tiled.cuh"
#include "backends/cuda/conv2d_common.cuh"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"

namespace pcnn::cuda::tiled {

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
    stage_padded_images(s, a.x, g0, gn, L.Hp, L.Wp, xs);  // the group's planes, one walk
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
  if (!last_block_done(&a.counter[kt_idx], unsigned(a.chunks))) return;
  const float* all = a.partial + size_t(kt_idx) * a.chunks * per_tile;
  for (int e = threadIdx.x; e < per_tile; e += blockDim.x) {
    const float sum = sum_rows_as(a.sum_loads, all + e, a.chunks, per_tile);
    const int it = e / KT, k = k0 + e % KT;
    if (k >= s.K) continue;
    if (it < crs) {
      if (a.dw) a.dw[size_t(k) * crs + it] = sum;
    } else if (a.db) {
      a.db[k] = sum;
    }
  }
}

// The data-gradient strip path two output rows a thread (FusedArgs::dx_rows == 2): a filter's
// taps are read once into registers and each of the R + 1 staged d(act_out) rows the two rows
// meet once, where one row a thread reads R rows and every tap per row (ncu, H100, LeNet-5's
// conv2 at batch 1024: the one-row blocks bound by shared loads, L1 84 % busy, 1.7-way
// conflicts). Output row h0 + i meets staged row h0 + u through tap r = i + R - 1 - u, so
// walking u down walks each row's taps up: the one-row path's sums, in its order.
// A block may hold several images (imgs from n on, DxLayout): an item is then (image, channel,
// row pair, strip), so that LeNet-5's conv2 (84 items an image) keeps most of 256 threads busy.
template <int RS>
__device__ __forceinline__ void backward_data_two_rows(const FusedArgs& a, const DxLayout& L,
                                                       const float* ds, const float* ws, int n,
                                                       int imgs, int c0) {
  const Conv2dShape& s = a.s;
  constexpr int WS = kDxStrip, R = RS, S = RS;
  const int strips = (s.W + WS - 1) / WS, pairs = (s.H + 1) / 2, plane = L.Ph * L.Qh;
  const int per_img = a.ct * pairs * strips;
  for (int e = threadIdx.x; e < imgs * per_img; e += blockDim.x) {
    const int img = e / per_img, ei = e % per_img;
    const int cc = ei / (pairs * strips), h0 = 2 * ((ei / strips) % pairs);
    const int w0 = (ei % strips) * WS;
    const int c = c0 + cc;
    if (c >= s.C) continue;
    const bool second = h0 + 1 < s.H;  // an odd plane's last pair has one row
    float acc[2][WS];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < WS; ++j) acc[i][j] = 0.f;
    const float* d0 = ds + img * L.d_floats + h0 * L.Qh + w0;
    for (int k = 0; k < s.K; ++k) {
      const float* wk = ws + (k * a.ct + cc) * R * S;
      float wr[R * S];
#pragma unroll
      for (int v = 0; v < R * S; ++v) wr[v] = wk[v];
      const float* dk = d0 + k * plane;
#pragma unroll
      for (int u = R; u >= 0; --u) {
        if (u == R && !second) continue;  // row h0 + R: past the plane, and only row 2 reads it
        float seg[WS + S - 1];
#pragma unroll
        for (int m = 0; m < WS + S - 1; ++m) seg[m] = dk[u * L.Qh + m];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const int r = i + R - 1 - u;
          if (r < 0 || r >= R) continue;
#pragma unroll
          for (int t = 0; t < S; ++t)
#pragma unroll
            for (int j = 0; j < WS; ++j)
              acc[i][j] = fmaf(wr[r * S + t], seg[j + S - 1 - t], acc[i][j]);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      if (i == 1 && !second) break;
      const size_t out = ((size_t(n + img) * s.C + c) * s.H + h0 + i) * s.W + w0;
#pragma unroll
      for (int j = 0; j < WS; ++j)
        if (w0 + j < s.W) a.dx.store(out + j, acc[i][j]);
    }
  }
}

// One data-gradient block: images [n, n + a.dx_imgs) (more than one only on the two-row strip
// path), channels [c0, c0+ct). Each thread owns its dx outputs and
// gathers over filters and taps from the halo-padded d(act_out): no scatter, no atomics.
// Unit stride with a known filter size: a thread owns kDxStrip outputs along w and slides a
// register row segment, (kDxStrip + S - 1) + S shared loads for kDxStrip*S multiply-adds
// (instead of 2 per multiply-add). Otherwise one output per thread, and the stride checks
// (integer divisions) are done once per tap, outside the loop over filters.
template <bool kUnitStride, int RS>
__device__ __forceinline__ void backward_data_block(const FusedArgs& a, int n, int c0,
                                                    float* smem) {
  const Conv2dShape& s = a.s;
  const int R = RS ? RS : s.R, S = RS ? RS : s.S;
  const int imgs = min(a.dx_imgs, s.N - n);
  const DxLayout L(s, a.ct, kUnitStride && RS != 0);
  const int P = s.P(), Q = s.Q();
  float* ds = smem;
  float* ws = smem + imgs * L.d_floats;
  for (BoxWalk e(L.Ph, L.Qh); e.plane < s.K * imgs; e.next()) {  // zero the halo and slack
    const int qh = e.col, ph = e.row;
    if (ph < L.hr || ph >= P + L.hr || qh < L.hs || qh >= Q + L.hs) ds[e.index] = 0.f;
  }
  for (int i = 0; i < imgs; ++i)
    stage_dact(s, a.d, n + i, 0, s.K, ds + i * L.d_floats + L.hr * L.Qh + L.hs, L.Ph * L.Qh,
               L.Qh);
  const int rs = R * S;
  for (BoxWalk e(a.ct, rs); e.plane < s.K; e.next()) {  // (k, channel of the tile, tap)
    const int c = c0 + e.row;
    if (c < s.C)
      copy_async(ws + e.index, a.w + (size_t(e.plane) * s.C + c) * rs + e.col);
    else
      ws[e.index] = 0.f;
  }
  copy_async_wait();
  __syncthreads();
  const int plane = L.Ph * L.Qh;
  if constexpr (kUnitStride && RS != 0) {  // the strip path
    if (a.dx_rows == 2) {
      backward_data_two_rows<RS>(a, L, ds, ws, n, imgs, c0);
      return;
    }
    constexpr int WS = kDxStrip;
    const int strips = (s.W + WS - 1) / WS;
    for (int e = threadIdx.x; e < a.ct * s.H * strips; e += blockDim.x) {
      const int cc = e / (s.H * strips), h = (e / strips) % s.H, w0 = (e % strips) * WS;
      const int c = c0 + cc;
      if (c >= s.C) break;
      float acc[WS];
#pragma unroll
      for (int j = 0; j < WS; ++j) acc[j] = 0.f;
      // Tap (r, t) reads output (h + pad - r, w + pad - t), staged at (+hr, +hs): the row of
      // tap r = 0 is h + R - 1, and a strip's register segment starts at column w0.
      const float* d0 = ds + (h + R - 1) * L.Qh + w0;
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
      const size_t out = ((size_t(n) * s.C + c) * s.H + h) * s.W + w0;
#pragma unroll
      for (int j = 0; j < WS; ++j)
        if (w0 + j < s.W) a.dx.store(out + j, acc[j]);
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
    for (ah = 0; ah < st && h < 0; ++ah) {           // find the class holding plane item `rem`
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
    a.dx.store(((size_t(n) * s.C + c) * s.H + h) * s.W + wi, acc);
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
    backward_data_block<kUnitStride, RS>(a, b / a.ctiles * a.dx_imgs, (b % a.ctiles) * a.ct,
                                         smem);
  }
}

// The data-gradient blocks alone (the Split variant's second launch).
template <bool kUnitStride, int RS>
__global__ void __launch_bounds__(kDxThreads, kDxMinBlocks) conv2d_backward_kernel_dx(FusedArgs a) {
  wait_for_previous_kernel();
  extern __shared__ float smem[];
  backward_data_block<kUnitStride, RS>(a, blockIdx.x / a.ctiles * a.dx_imgs,
                                       (blockIdx.x % a.ctiles) * a.ct, smem);
}


template <int KT, bool kUnit, int RS>
void launch_fused(CudaContext& ctx, const FusedPlan& f, const FusedArgs& a) {
  constexpr auto fused = conv2d_backward_kernel_fused<KT, kUnit, RS>;
  if (!f.split) {
    if (f.smem_floats > kMaxSmemFloats) allow_opt_in_smem<fused>(ctx);
    launch(ctx, "conv2d_backward_kernel_fused", fused, f.dw_blocks + f.dx_blocks, f.threads,
           size_t(f.smem_floats) * sizeof(float), a);
    return;
  }
  // The fused kernel with the weight-gradient blocks only, then the data-gradient kernel.
  if (f.smem_floats > kMaxSmemFloats) allow_opt_in_smem<fused>(ctx);
  launch(ctx, "conv2d_backward_kernel_fused (dw)", fused, f.dw_blocks, f.threads,
         size_t(f.smem_floats) * sizeof(float), a);
  launch_dx(ctx, f, a);
}

// The definition the conv2d_backward_tiled_kt*.cu files instantiate: the compiled filter size
// (row_taps: unit stride), or the kernels for any size at unit or other stride.
template <int KT>
void launch_fused_kt(CudaContext& ctx, const FusedPlan& f, const FusedArgs& a) {
  if (f.rs == 5)
    launch_fused<KT, true, 5>(ctx, f, a);
  else if (f.rs == 3)
    launch_fused<KT, true, 3>(ctx, f, a);
  else if (a.s.stride == 1)
    launch_fused<KT, true, 0>(ctx, f, a);
  else
    launch_fused<KT, false, 0>(ctx, f, a);
}

}  // namespace pcnn::cuda::tiled
