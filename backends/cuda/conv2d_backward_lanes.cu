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
  const bool f32 = a.d.dy.prec == Precision::F32 && a.d.y.prec == Precision::F32;
  const int rs = s.R * s.S;
  for (int k0 = 0; k0 < s.K; k0 += l.kc) {
    const int kc = min(l.kc, s.K - k0);
    __syncthreads();  // the previous round is no longer read
    dispatch_activation(a.d.act, [&](auto tag) {
      constexpr Activation A = decltype(tag)::value;
      if (f32)
        stage_lanes_dact<A, true>(s, a.d, n0, k0, kc, ds);
      else
        stage_lanes_dact<A, false>(s, a.d, n0, k0, kc, ds);
    });
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

}  // namespace pcnn::cuda::tiled
