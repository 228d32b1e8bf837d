// Device helpers shared by the convolution kernels: where d(pre-activation) comes from and how
// to compute it on the fly (through max/avg pooling and the activation derivative) from what the
// forward kept, so the backward kernels never need it materialised.
#pragma once

#include <cuda_runtime.h>

#include "backends/cuda/act_io.cuh"
#include "backends/cuda/common.cuh"
#include "core/activation_math.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda {

// Whole block: images n .. n + imgs - 1 of x, zero-padded, into xs (imgs * C, Hp, Wp). fp32 by
// cp.async (all of a thread's copies in flight; copy_async_wait() before the block reads them);
// 16-bit words through registers, widened, four loads issued before their stores (one memory
// latency per four words, not per word).
template <int Unroll, class Put>
__device__ __forceinline__ void walk_padded_images(const Conv2dShape& s, int planes, size_t xn,
                                                   int Hp, int Wp, float* xs, Put put) {
#pragma unroll Unroll
  for (BoxWalk e(Hp, Wp); e.plane < planes; e.next()) {
    const int h = e.row - s.pad, wi = e.col - s.pad;
    if (h >= 0 && h < s.H && wi >= 0 && wi < s.W)
      put(xs + e.index, xn + (size_t(e.plane) * s.H + h) * s.W + wi);
    else
      xs[e.index] = 0.f;
  }
}
__device__ __forceinline__ void stage_padded_images(const Conv2dShape& s, const ActIn& x, int n,
                                                    int imgs, int Hp, int Wp, float* xs) {
  const size_t xn = size_t(n) * s.C * s.H * s.W;
  const int planes = imgs * s.C;
  if (x.prec == Precision::F32) {
    const float* x32 = static_cast<const float*>(x.p);
    walk_padded_images<1>(s, planes, xn, Hp, Wp, xs,
                          [&](float* dst, size_t i) { copy_async(dst, x32 + i); });
  } else {
    walk_padded_images<4>(s, planes, xn, Hp, Wp, xs,
                          [&](float* dst, size_t i) { *dst = x.load(i); });
  }
}
__device__ __forceinline__ void stage_padded_image(const Conv2dShape& s, const ActIn& x, int n,
                                                   int Hp, int Wp, float* xs) {
  stage_padded_images(s, x, n, 1, Hp, Wp, xs);
}

// d(pre-activation) (N,K,P,Q) as a function of what the forward kept (core/shapes.hpp
// ConvKept). pool != None needs window == stride == pw (non-overlapping windows: every conv
// output is in at most one). dy and y may be stored in 16 bits (act_io.cuh).
struct DactSource {
  ActIn dy;               // (N,K,P/pw,Q/pw) when pooled, else (N,K,P,Q)
  ActIn y;                // the forward's output, dy's shape: act'(y) (unused by avg pooling)
  const uint8_t* argmax;  // max pooling: each window's maximum, dy's shape
  const float* act_out;   // avg pooling with an activation: the (N,K,P,Q) pre-pool output
  Activation act;
  PoolKind pool;
  int pw;
};

// dy[i] carried back through the activation: dy[i] * act'(y[i]) (y not read for None).
__device__ __forceinline__ float dact_of_output(const DactSource& d, size_t i) {
  const float g = d.dy.load(i);
  return d.act == Activation::None ? g : g * activation_derivative(d.act, d.y.load(i));
}

// One conv output's d(pre-activation): under max pooling, its window's gradient if the window's
// kept maximum is here, else 0.
__device__ __forceinline__ float dact_at(const Conv2dShape& s, const DactSource& d, int n, int k,
                                         int p, int q) {
  const int P = s.P(), Q = s.Q();
  const size_t i = ((size_t(n) * s.K + k) * P + p) * Q + q;
  if (d.pool == PoolKind::None) return dact_of_output(d, i);
  const int pw = d.pw, P2 = P / pw, Q2 = Q / pw, pp = p / pw, pq = q / pw;
  if (pp >= P2 || pq >= Q2) return 0.f;  // outside every window: no gradient
  const size_t o = ((size_t(n) * s.K + k) * P2 + pp) * Q2 + pq;
  if (d.pool == PoolKind::Max) {
    if (d.argmax[o] != (p - pp * pw) * pw + (q - pq * pw)) return 0.f;
    return dact_of_output(d, o);
  }
  const float v = d.dy.load(o) * (1.f / float(pw * pw));
  return d.act == Activation::None ? v : v * activation_derivative(d.act, d.act_out[i]);
}

// dy or y element i: F32 true reads fp32 with no test of the format (the caller checked it once
// for the whole staging loop), false goes through ActIn::load.
template <bool F32>
__device__ __forceinline__ float load_act(const ActIn& a, size_t i) {
  if constexpr (F32) return static_cast<const float*>(a.p)[i];
  return a.load(i);
}

// Whole block: dst[kk*pitch_k + p*pitch_row + q] = d(pre-activation)(n, k0+kk, p, q) for kk < kt
// (zero where k0+kk >= K), with d.act == A; F32: dy and y are fp32 (load_act). Pooled sources are
// walked window by window: a window's dy, index and output are read once.
template <Activation A, bool F32>
__device__ __forceinline__ void stage_dact_as(const Conv2dShape& s, const DactSource& d, int n,
                                              int k0, int kt, float* dst, int pitch_k,
                                              int pitch_row) {
  const int P = s.P(), Q = s.Q();
  // unroll 4: four independent gradient reads in flight per thread, not one at a time
  if (d.pool == PoolKind::None) {
#pragma unroll 4
    for (BoxWalk e(P, Q); e.plane < kt; e.next()) {
      const int kk = e.plane, p = e.row, q = e.col, k = k0 + kk;
      float v = 0.f;
      if (k < s.K) {
        const size_t i = (size_t(n) * s.K + k) * P * Q + p * Q + q;
        v = load_act<F32>(d.dy, i);
        if constexpr (A != Activation::None) v *= activation_derivative<A>(load_act<F32>(d.y, i));
      }
      dst[kk * pitch_k + p * pitch_row + q] = v;
    }
    return;
  }
  const int pw = d.pw, P2 = P / pw, Q2 = Q / pw;
  if (P2 * pw < P || Q2 * pw < Q)  // rows / columns no window covers
    for (int e = threadIdx.x; e < kt * P * Q; e += blockDim.x) {
      const int kk = e / (P * Q), p = (e / Q) % P, q = e % Q;
      if (p >= P2 * pw || q >= Q2 * pw) dst[kk * pitch_k + p * pitch_row + q] = 0.f;
    }
  const float inv_area = 1.f / float(pw * pw);
#pragma unroll 4
  for (BoxWalk e(P2, Q2); e.plane < kt; e.next()) {
    const int kk = e.plane, pp = e.row, pq = e.col, k = k0 + kk;
    float* out = dst + kk * pitch_k + pp * pw * pitch_row + pq * pw;
    if (k >= s.K) {
      for (int a = 0; a < pw; ++a)
        for (int b = 0; b < pw; ++b) out[a * pitch_row + b] = 0.f;
      continue;
    }
    const size_t o = ((size_t(n) * s.K + k) * P2 + pp) * Q2 + pq;
    const float g = load_act<F32>(d.dy, o);
    if (d.pool == PoolKind::Max) {  // the window's gradient at its kept maximum, 0 elsewhere
      float gm = g;
      if constexpr (A != Activation::None) gm *= activation_derivative<A>(load_act<F32>(d.y, o));
      const int best = d.argmax[o];
      for (int a = 0; a < pw; ++a)
        for (int b = 0; b < pw; ++b) out[a * pitch_row + b] = a * pw + b == best ? gm : 0.f;
      continue;
    }
    const float* ao = d.act_out + ((size_t(n) * s.K + k) * P + pp * pw) * Q + pq * pw;
    for (int a = 0; a < pw; ++a)
      for (int b = 0; b < pw; ++b) {
        float v = g * inv_area;
        if constexpr (A != Activation::None) v *= activation_derivative<A>(ao[a * Q + b]);
        out[a * pitch_row + b] = v;
      }
  }
}

// The activation and the storage format picked once per thread, not per element (see
// forward_epilogue): the fp32 loop reads as it did before the 16-bit formats (H100, session 19:
// with a format test per load the fp32 conv backward was 3-17 % slower a layer).
__device__ __forceinline__ void stage_dact(const Conv2dShape& s, const DactSource& d, int n, int k0,
                                           int kt, float* dst, int pitch_k, int pitch_row) {
  const bool f32 = d.dy.prec == Precision::F32 && d.y.prec == Precision::F32;
  dispatch_activation(d.act, [&](auto tag) {
    constexpr Activation A = decltype(tag)::value;
    if (f32)
      stage_dact_as<A, true>(s, d, n, k0, kt, dst, pitch_k, pitch_row);
    else
      stage_dact_as<A, false>(s, d, n, k0, kt, dst, pitch_k, pitch_row);
  });
}

}  // namespace pcnn::cuda
