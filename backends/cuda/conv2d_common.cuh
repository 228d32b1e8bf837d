// Device helpers shared by the convolution kernels: where d(act_out) comes from and how to
// compute it on the fly (through max/avg pooling and the activation derivative), so the
// backward kernels never need it materialised.
#pragma once

#include <cuda_runtime.h>

#include "core/activation_math.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda {

// d(act_out) (N,K,P,Q) as a function of what the caller holds. pool != None needs
// window == stride == pw (non-overlapping windows: every act_out element is in at most one).
struct DactSource {
  const float* dy;       // (N,K,P/pw,Q/pw) when pooled, else (N,K,P,Q)
  const float* act_out;  // (N,K,P,Q); unused (may be nullptr) when act and pool are None
  Activation act;
  PoolKind pool;
  int pw;
};

// The pooling window a conv output lies in, and whether the window's first maximum is there.
__device__ __forceinline__ float dact_at(const Conv2dShape& s, const DactSource& d, int n, int k, int p,
                                int q) {
  const int P = s.P(), Q = s.Q();
  const size_t i = ((size_t(n) * s.K + k) * P + p) * Q + q;
  float v;
  if (d.pool == PoolKind::None) {
    v = d.dy[i];
  } else {
    const int pw = d.pw, P2 = P / pw, Q2 = Q / pw, pp = p / pw, pq = q / pw;
    if (pp >= P2 || pq >= Q2) return 0.f;  // outside every window: no gradient
    const float g = d.dy[((size_t(n) * s.K + k) * P2 + pp) * Q2 + pq];
    if (d.pool == PoolKind::Max) {
      const size_t base = ((size_t(n) * s.K + k) * P + pp * pw) * Q + pq * pw;
      float best = d.act_out[base];
      int bi = 0, bj = 0;
      for (int a = 0; a < pw; ++a)
        for (int b = 0; b < pw; ++b) {
          const float u = d.act_out[base + size_t(a) * Q + b];
          if (u > best) { best = u; bi = a; bj = b; }
        }
      v = (p == pp * pw + bi && q == pq * pw + bj) ? g : 0.f;
    } else {
      v = g * (1.f / float(pw * pw));
    }
  }
  if (d.act != Activation::None) v *= activation_derivative(d.act, d.act_out[i]);
  return v;
}

// Whole block: dst[kk*pitch_k + p*pitch_row + q] = d(act_out)(n, k0+kk, p, q) for kk < kt
// (zero where k0+kk >= K), with d.act == A. Pooled sources are walked window by window so each
// act_out element is read once.
template <Activation A>
__device__ __forceinline__ void stage_dact_as(const Conv2dShape& s, const DactSource& d, int n,
                                              int k0, int kt, float* dst, int pitch_k,
                                              int pitch_row) {
  const int P = s.P(), Q = s.Q();
  // unroll 4: four independent gradient reads in flight per thread, not one at a time
  if (d.pool == PoolKind::None) {
#pragma unroll 4
    for (int e = threadIdx.x; e < kt * P * Q; e += blockDim.x) {
      const int kk = e / (P * Q), pq = e % (P * Q), p = pq / Q, q = pq % Q, k = k0 + kk;
      float v = 0.f;
      if (k < s.K) {
        const size_t i = (size_t(n) * s.K + k) * P * Q + pq;
        v = d.dy[i];
        if constexpr (A != Activation::None) v *= activation_derivative<A>(d.act_out[i]);
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
  for (int e = threadIdx.x; e < kt * P2 * Q2; e += blockDim.x) {
    const int kk = e / (P2 * Q2), pp = (e / Q2) % P2, pq = e % Q2, k = k0 + kk;
    float* out = dst + kk * pitch_k + pp * pw * pitch_row + pq * pw;
    if (k >= s.K) {
      for (int a = 0; a < pw; ++a)
        for (int b = 0; b < pw; ++b) out[a * pitch_row + b] = 0.f;
      continue;
    }
    const float g = d.dy[((size_t(n) * s.K + k) * P2 + pp) * Q2 + pq];
    const float* ao = d.act_out + ((size_t(n) * s.K + k) * P + pp * pw) * Q + pq * pw;
    int bi = 0, bj = 0;
    if (d.pool == PoolKind::Max) {
      float best = ao[0];
      for (int a = 0; a < pw; ++a)
        for (int b = 0; b < pw; ++b)
          if (ao[a * Q + b] > best) { best = ao[a * Q + b]; bi = a; bj = b; }
    }
    for (int a = 0; a < pw; ++a)
      for (int b = 0; b < pw; ++b) {
        float v = d.pool == PoolKind::Max ? ((a == bi && b == bj) ? g : 0.f) : g * inv_area;
        if constexpr (A != Activation::None) v *= activation_derivative<A>(ao[a * Q + b]);
        out[a * pitch_row + b] = v;
      }
  }
}

// The activation picked once per thread, not per element (see forward_epilogue).
__device__ __forceinline__ void stage_dact(const Conv2dShape& s, const DactSource& d, int n, int k0,
                                           int kt, float* dst, int pitch_k, int pitch_row) {
  dispatch_activation(d.act, [&](auto tag) {
    stage_dact_as<decltype(tag)::value>(s, d, n, k0, kt, dst, pitch_k, pitch_row);
  });
}

}  // namespace pcnn::cuda
