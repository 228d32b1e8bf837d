// The Split variant's data gradient one image a lane, for strided layers with few channels
// (conv2d_backward_tiled.cuh says what a warp owns). Why: Simard 2003's conv2 (5 -> 50 channels,
// 5x5, stride 2, 13x13 -> 5x5) gave the one-output-a-thread gather of the Split kernel two
// shared loads per multiply-add and 2.6 TFLOP/s (ncu, H100, batch 1024: 124 us, half of the
// layer's backward). Here a warp's lanes are 32 images: a filter value is one broadcast load for
// kLanesCt x JW products, and a d(act_out) row segment in registers serves every column tap.
#include <cstdint>

#include "backends/cuda/common.cuh"
#include "backends/cuda/conv2d_backward_tiled.cuh"
#include "backends/cuda/conv2d_common.cuh"
#include "backends/cuda/launch.cuh"

namespace pcnn::cuda::tiled {

namespace {

struct LanesArgs {
  int groups, ctiles, kc, warps, ksplit;
};

// Element i of a fp32 (F32) or 16-bit activation, in two steps: the load, then (16 bits) the
// widening, so that a batch of loads has no branch between them (ActIn::load tests the format
// before each load: the 16-bit staging ran one load at a time, 132 against 60 us).
template <bool F32>
struct RawAct {
  using type = float;
  __device__ static float get(const ActIn& a, size_t i) { return static_cast<const float*>(a.p)[i]; }
  __device__ static float widen(const ActIn&, float v) { return v; }
};
template <>
struct RawAct<false> {
  using type = uint16_t;
  __device__ static uint16_t get(const ActIn& a, size_t i) {
    return static_cast<const uint16_t*>(a.p)[i];
  }
  __device__ static float widen(const ActIn& a, uint16_t v) { return widen_from_storage(a.prec, v); }
};

// Whole block: d(pre-activation) of images [n0, n0+32) and filters [k0, k0+kc) into
// ds[(kk*P*Q + e) * kLanesPitch + image] (0 past N). Consecutive threads read consecutive
// (filter, p, q) of one image (coalesced) and write banks e mod 32 apart (no conflicts); each
// thread has eight images' loads in flight (one at a time, staging was most of the kernel:
// ncu, H100, Simard 2003's conv2 at batch 1024).
template <Activation A, bool F32>
__device__ __forceinline__ void stage_lanes_dact(const Conv2dShape& s, const DactSource& d, int n0,
                                                 int k0, int kc, float* ds) {
  const int PQ = s.P() * s.Q(), per_img = kc * PQ;
  const size_t img_stride = size_t(s.K) * PQ;
  const int imgs = min(kLanesImages, s.N - n0);
  for (int e = threadIdx.x; e < per_img; e += blockDim.x) {
    float* dst = ds + e * kLanesPitch;
    if (k0 + e / PQ >= s.K) {  // a filter tile's tail (the weight gradient's tiles)
      for (int img = 0; img < kLanesImages; ++img) dst[img] = 0.f;
      continue;
    }
    if (d.pool != PoolKind::None) {  // pooled: the general form, element by element
      for (int img = 0; img < kLanesImages; ++img)
        dst[img] = img < imgs ? dact_at(s, d, n0 + img, k0 + e / PQ, (e % PQ) / s.Q(), e % s.Q())
                              : 0.f;
      continue;
    }
    // Images past N read the last one (no branch between the loads) and store 0.
    const size_t base = (size_t(n0) * s.K + k0) * PQ + e;
#pragma unroll 1
    for (int i0 = 0; i0 < kLanesImages; i0 += 8) {
      typename RawAct<F32>::type g[8], yv[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const size_t i = base + min(i0 + u, imgs - 1) * img_stride;
        g[u] = RawAct<F32>::get(d.dy, i);
        if constexpr (A != Activation::None) yv[u] = RawAct<F32>::get(d.y, i);
      }
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        float v = RawAct<F32>::widen(d.dy, g[u]);
        if constexpr (A != Activation::None)
          v *= activation_derivative<A>(RawAct<F32>::widen(d.y, yv[u]));
        dst[i0 + u] = i0 + u < imgs ? v : 0.f;
      }
    }
  }
}

// stage_lanes_dact with the activation and the storage format picked once per call.
__device__ __forceinline__ void stage_lanes_dact_any(const Conv2dShape& s, const DactSource& d,
                                                     int n0, int k0, int kc, float* ds) {
  const bool f32 = d.dy.prec == Precision::F32 && d.y.prec == Precision::F32;
  dispatch_activation(d.act, [&](auto tag) {
    constexpr Activation A = decltype(tag)::value;
    if (f32)
      stage_lanes_dact<A, true>(s, d, n0, k0, kc, ds);
    else
      stage_lanes_dact<A, false>(s, d, n0, k0, kc, ds);
  });
}

// Whole block: plane c of images [n0, n0+32) of x into xs[e * kLanesPitch + image] (0 past N),
// eight images' loads in flight as above.
template <bool F32>
__device__ __forceinline__ void stage_lanes_plane(const Conv2dShape& s, const ActIn& x, int n0,
                                                  int c, float* xs) {
  const int HW = s.H * s.W, imgs = min(kLanesImages, s.N - n0);
  const size_t img_stride = size_t(s.C) * HW, base = (size_t(n0) * s.C + c) * HW;
  for (int e = threadIdx.x; e < HW; e += blockDim.x) {
    float* dst = xs + e * kLanesPitch;
#pragma unroll 1
    for (int i0 = 0; i0 < kLanesImages; i0 += 8) {
      typename RawAct<F32>::type v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) v[u] = RawAct<F32>::get(x, base + e + min(i0 + u, imgs - 1) * img_stride);
#pragma unroll
      for (int u = 0; u < 8; ++u) dst[i0 + u] = i0 + u < imgs ? RawAct<F32>::widen(x, v[u]) : 0.f;
    }
  }
}

// One warp's products for the staged filters: row taps r = ra + st*m for m in [m_lo, m_hi]
// (output row p0 - m), column taps t = tb + st*u for u < U. The strip's outputs j read
// d(act_out) columns qbase + (U - 1) + j - u, held in seg (0 outside the plane).
template <int U, int JW>
__device__ __forceinline__ void lanes_products(const Conv2dShape& s, const float* ds,
                                               const float* ws, int kk0, int kk1, int ra, int p0,
                                               int m_lo,
                                               int m_hi, int tb, int qbase,
                                               float (&acc)[kLanesCt][JW]) {
  constexpr int ST = kLanesStride, SEG = JW + U - 1;
  const int P = s.P(), Q = s.Q(), lane = threadIdx.x % 32;
  for (int m = m_lo; m <= m_hi; ++m) {
    const int r = ra + ST * m, p = p0 - m;
    for (int kk = kk0; kk < kk1; ++kk) {
      const float* drow = ds + ((kk * P + p) * Q) * kLanesPitch + lane;
      float seg[SEG];
#pragma unroll
      for (int i = 0; i < SEG; ++i) {
        const int q = qbase + i;
        seg[i] = q >= 0 && q < Q ? drow[q * kLanesPitch] : 0.f;
      }
      const float* wr = ws + ((kk * s.R + r) * s.S + tb) * kLanesCt;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        float wv[kLanesCt];
#pragma unroll
        for (int cc = 0; cc < kLanesCt; ++cc) wv[cc] = wr[u * ST * kLanesCt + cc];
#pragma unroll
        for (int cc = 0; cc < kLanesCt; ++cc)
#pragma unroll
          for (int j = 0; j < JW; ++j) acc[cc][j] = fmaf(wv[cc], seg[j + U - 1 - u], acc[cc][j]);
      }
    }
  }
}

template <int JW>
__global__ void __launch_bounds__(kLanesMaxWarps * kLanesMaxSplit * 32, 1)
    conv2d_backward_kernel_dx_lanes(FusedArgs a, LanesArgs l) {
  wait_for_previous_kernel();
  extern __shared__ float smem[];
  constexpr int ST = kLanesStride, UMAX = (kLanesS + ST - 1) / ST;
  const Conv2dShape& s = a.s;
  const DxLanesLayout L(s, JW, l.kc);
  float* ds = smem;
  float* ws = smem + L.d_floats;
  int b = blockIdx.x;
  const int group = b % l.groups;
  b /= l.groups;
  const int c0 = (b % l.ctiles) * kLanesCt, n0 = (b / l.ctiles) * kLanesImages;
  // Items are dealt to the groups in turn, so a block mixes rows with many and few taps. With
  // ksplit 2, warps `slot` and `slot + warps` share an item, each with half of a round's filters.
  const int slot = (threadIdx.x / 32) % l.warps, part = threadIdx.x / 32 / l.warps;
  const int item = group + slot * l.groups;
  const bool busy = item < L.items;  // the same for the whole warp
  const int strip = item % L.strips, tb = (item / L.strips) % ST, h = item / (L.strips * ST);
  // Rows: taps r = ra + st*m reach output row p0 - m; only the m with a row in the plane.
  const int ra = (h + s.pad) % ST, p0 = (h + s.pad - ra) / ST;
  const int m_lo = max(0, p0 - s.P() + 1), m_hi = min((s.R - ra + ST - 1) / ST - 1, p0);
  // Columns of class tb: w = w0 + st*j, taps t = tb + st*u (u < U), output column qb + j - u.
  const int w0 = ((tb - s.pad) % ST + ST) % ST;
  const int nw = w0 < s.W ? (s.W - 1 - w0) / ST + 1 : 0, j0 = strip * JW;
  const int U = (s.S - tb + ST - 1) / ST, qb = (w0 + s.pad - tb) / ST;
  float acc[kLanesCt][JW];
#pragma unroll
  for (int cc = 0; cc < kLanesCt; ++cc)
#pragma unroll
    for (int j = 0; j < JW; ++j) acc[cc][j] = 0.f;
  const int rs = s.R * s.S;
  for (int k0 = 0; k0 < s.K; k0 += l.kc) {
    const int kc = min(l.kc, s.K - k0);
    __syncthreads();  // the previous round is no longer read
    stage_lanes_dact_any(s, a.d, n0, k0, kc, ds);
    // ws[(kk*rs + tap) * kLanesCt + cc] = w(k0 + kk, c0 + cc, tap), 0 past C
    for (int g = threadIdx.x; g < kc * rs * kLanesCt; g += blockDim.x) {
      const int cc = g % kLanesCt, tap = (g / kLanesCt) % rs, kk = g / (kLanesCt * rs);
      const int c = c0 + cc;
      ws[g] = c < s.C ? a.w[(size_t(k0 + kk) * s.C + c) * rs + tap] : 0.f;
    }
    __syncthreads();
    if (!busy || j0 >= nw) continue;
    const int kk0 = kc * part / l.ksplit, kk1 = kc * (part + 1) / l.ksplit;
    if (U == UMAX)
      lanes_products<UMAX, JW>(s, ds, ws, kk0, kk1, ra, p0, m_lo, m_hi, tb, qb + j0 - (UMAX - 1),
                               acc);
    else if (U == UMAX - 1)
      lanes_products<UMAX - 1, JW>(s, ds, ws, kk0, kk1, ra, p0, m_lo, m_hi, tb,
                                   qb + j0 - (UMAX - 2), acc);
  }
  const int lane = threadIdx.x % 32;
  if (l.ksplit == 2) {  // the second half's sums added to the first's (a fixed order)
    float* red = smem;   // [(cc*JW + j) * warps + slot][lane]
    __syncthreads();
    if (part == 1)
#pragma unroll
      for (int cc = 0; cc < kLanesCt; ++cc)
#pragma unroll
        for (int j = 0; j < JW; ++j) red[((cc * JW + j) * l.warps + slot) * 32 + lane] = acc[cc][j];
    __syncthreads();
    if (part == 1) return;
#pragma unroll
    for (int cc = 0; cc < kLanesCt; ++cc)
#pragma unroll
      for (int j = 0; j < JW; ++j) acc[cc][j] += red[((cc * JW + j) * l.warps + slot) * 32 + lane];
  }
  const int n = n0 + lane;
  if (!busy || n >= s.N) return;
#pragma unroll
  for (int cc = 0; cc < kLanesCt; ++cc) {
    const int c = c0 + cc;
    if (c >= s.C) break;
    const size_t row = ((size_t(n) * s.C + c) * s.H + h) * s.W + w0;
#pragma unroll
    for (int j = 0; j < JW; ++j)
      if (j0 + j < nw) a.dx.store(row + size_t(ST) * (j0 + j), acc[cc][j]);
  }
}

// The weight gradient one image a lane. Block = a chunk of 32-image groups x channel c x a tile
// of kLanesKt filters; warp = filter row r (R warps). For each output row p a lane loads its
// image's x row (the 13 columns a strip of 5 outputs reads at stride 2) into registers and each
// d(pre-activation) value once: 13 + 25 loads for 125 multiply-adds. The lanes' sums are added by
// shuffles once a block (a fixed order), then the chunks' sums by conv2d_dw_lanes_reduce (a fixed
// order, sum_rows): deterministic. The bias rides along on warp r = 0 of the c = 0 blocks.
struct LanesDwArgs {
  int ktiles, groups_per_chunk;
};

template <int QS>
__global__ void __launch_bounds__(kLanesDwMaxWarps * 32, 2)
    conv2d_backward_kernel_dw_lanes(FusedArgs a, LanesDwArgs l) {
  wait_for_previous_kernel();
  extern __shared__ float smem[];
  constexpr int ST = kLanesStride, S = kLanesS, KT = kLanesKt, XSEG = ST * (QS - 1) + S;
  const Conv2dShape& s = a.s;
  const int P = s.P(), Q = s.Q(), PQ = P * Q, crs = s.C * s.R * s.S;
  int b = blockIdx.x;
  const int kt = b % l.ktiles;
  b /= l.ktiles;
  const int c = b % s.C, chunk = b / s.C, k0 = kt * KT;
  const int lane = threadIdx.x % 32, r = threadIdx.x / 32;
  const bool bias = c == 0 && r == 0;  // the same for the whole warp
  float* xs = smem;
  float* ds = smem + s.H * s.W * kLanesPitch;
  float acc[KT][S], accb[KT];
#pragma unroll
  for (int kk = 0; kk < KT; ++kk) {
    accb[kk] = 0.f;
#pragma unroll
    for (int t = 0; t < S; ++t) acc[kk][t] = 0.f;
  }
  const bool f32x = a.x.prec == Precision::F32;
  const int groups = (s.N + kLanesImages - 1) / kLanesImages;
  const int g_end = min(groups, (chunk + 1) * l.groups_per_chunk);
  for (int g = chunk * l.groups_per_chunk; g < g_end; ++g) {
    const int n0 = g * kLanesImages;
    __syncthreads();  // the previous group is no longer read
    if (f32x)
      stage_lanes_plane<true>(s, a.x, n0, c, xs);
    else
      stage_lanes_plane<false>(s, a.x, n0, c, xs);
    stage_lanes_dact_any(s, a.d, n0, k0, KT, ds);
    __syncthreads();
    for (int p = 0; p < P; ++p) {
      // A row of the padding reads zeros; only the bias warp still has sums to make there.
      const int h = ST * p + r - s.pad;
      const bool row_in = h >= 0 && h < s.H;
      if (!row_in && !bias) continue;
      for (int q0 = 0; q0 < Q; q0 += QS) {
        float xr[XSEG];
#pragma unroll
        for (int i = 0; i < XSEG; ++i) {
          const int w = ST * q0 - s.pad + i;
          xr[i] = row_in && w >= 0 && w < s.W ? xs[(h * s.W + w) * kLanesPitch + lane] : 0.f;
        }
#pragma unroll
        for (int j = 0; j < QS; ++j) {
          if (q0 + j >= Q) break;
          const float* dq = ds + (p * Q + q0 + j) * kLanesPitch + lane;
#pragma unroll
          for (int kk = 0; kk < KT; ++kk) {
            const float dv = dq[kk * PQ * kLanesPitch];
            if (bias) accb[kk] += dv;
#pragma unroll
            for (int t = 0; t < S; ++t) acc[kk][t] = fmaf(dv, xr[ST * j + t], acc[kk][t]);
          }
        }
      }
    }
  }
  // The 32 images' sums, by a butterfly of shuffles; lane 0 publishes this chunk's.
  float* out = a.partial + size_t(chunk) * lanes_dw_per_chunk(s);
#pragma unroll
  for (int kk = 0; kk < KT; ++kk) {
#pragma unroll
    for (int t = 0; t < S; ++t) {
      float v = acc[kk][t];
#pragma unroll
      for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
      if (lane == 0 && k0 + kk < s.K)
        out[size_t(k0 + kk) * crs + (c * s.R + r) * s.S + t] = v;
    }
    if (bias) {
      float v = accb[kk];
#pragma unroll
      for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
      if (lane == 0 && k0 + kk < s.K) out[size_t(s.K) * crs + k0 + kk] = v;
    }
  }
}

// dw (then db) = the chunks' sums, in a fixed order (sum_rows).
__global__ void conv2d_dw_lanes_reduce(Conv2dShape s, const float* partial, int chunks, float* dw,
                                       float* db, int loads) {
  wait_for_previous_kernel();
  const size_t dw_size = size_t(s.K) * s.C * s.R * s.S, per_chunk = lanes_dw_per_chunk(s);
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < per_chunk;
       i += size_t(gridDim.x) * blockDim.x) {
    const float v = sum_rows_as(loads, partial + i, chunks, per_chunk);
    if (i < dw_size) {
      if (dw) dw[i] = v;
    } else if (db) {
      db[i - dw_size] = v;
    }
  }
}

}  // namespace

void launch_dx_lanes(CudaContext& ctx, const FusedPlan& f, const FusedArgs& a) {
  const LanesArgs l{f.lanes_groups, f.lanes_ctiles, f.lanes_kc, f.lanes_warps, f.lanes_ksplit};
  const int blocks = ceil_div(a.s.N, kLanesImages) * f.lanes_ctiles * f.lanes_groups;
  const size_t smem = size_t(f.dx_smem_floats) * sizeof(float);
  if (f.lanes_jw == 4)
    launch(ctx, "conv2d_backward_kernel_dx_lanes", conv2d_backward_kernel_dx_lanes<4>, blocks,
           f.lanes_warps * f.lanes_ksplit * 32, smem, a, l);
  else
    launch(ctx, "conv2d_backward_kernel_dx_lanes", conv2d_backward_kernel_dx_lanes<7>, blocks,
           f.lanes_warps * f.lanes_ksplit * 32, smem, a, l);
}

void launch_dw_lanes(CudaContext& ctx, const FusedPlan& f, const FusedArgs& a) {
  const Conv2dShape& s = a.s;
  const int ktiles = ceil_div(s.K, kLanesKt);
  const LanesDwArgs l{ktiles, f.lanes_dw_groups};
  const int chunks = f.lanes_dw_chunks;
  const size_t smem = size_t(lanes_dw_floats(s)) * sizeof(float);
  launch(ctx, "conv2d_backward_kernel_dw_lanes", conv2d_backward_kernel_dw_lanes<5>,
         chunks * s.C * ktiles, s.R * 32, smem, a, l);
  launch(ctx, "conv2d_dw_lanes_reduce", conv2d_dw_lanes_reduce,
         grid_for(lanes_dw_per_chunk(s), 256, ctx.sm_count()), 256, 0, s, a.partial, chunks, a.dw,
         a.db, a.sum_loads);
}

}  // namespace pcnn::cuda::tiled
