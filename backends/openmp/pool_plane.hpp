// Pooling of one (H,W) plane, called per plane by pool2d and by the fused conv kernels from
// their own threads. The LeNet case (2x2 max, stride 2) is written out here; every other shape
// runs serial's plane loops (backends/serial/pool_plane.hpp), padded ones among them. Same rules
// as the contract: max takes the first maximum in row-major window order, avg divides by the
// window's in-image count.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "backends/serial/pool_plane.hpp"
#include "core/activation_math.hpp"
#include "core/shapes.hpp"

namespace pcnn::omp {

// x (H,W) -> y (P,Q); overwrites y, and argmax (P,Q) when max pooling is given one.
inline void pool_forward_plane(PoolKind kind, const Pool2dShape& s, const float* x, float* y,
                               uint8_t* argmax = nullptr) {
  const int P = s.P(), Q = s.Q(), win = s.window, st = s.stride;
  if (kind == PoolKind::Max && win == 2 && st == 2 && s.pad == 0) {
    // The LeNet case, written out: two input rows give one output row. The index is the
    // window's place a b / c d = 0 1 / 2 3 (pool_argmax_byte).
    for (int p = 0; p < P; ++p) {
      const float* r0 = x + size_t(2 * p) * s.W;
      const float* r1 = r0 + s.W;
      float* out = y + size_t(p) * Q;
      uint8_t* at = argmax ? argmax + size_t(p) * Q : nullptr;
      for (int q = 0; q < Q; ++q) {
        float m = r0[2 * q];
        int best = 0;
        if (r0[2 * q + 1] > m) m = r0[2 * q + 1], best = 1;
        if (r1[2 * q] > m) m = r1[2 * q], best = 2;
        if (r1[2 * q + 1] > m) m = r1[2 * q + 1], best = 3;
        out[q] = m;
        if (at) at[q] = uint8_t(best);
      }
    }
    return;
  }
  serial::pool_forward_plane(kind, s, x, y, argmax);
}

// argmax, y, dy (P,Q) -> dx (H,W): max pooling's gradient from its kept indices through the
// activation act before it; overwrites dx.
inline void max_pool_backward_argmax_plane(const Pool2dShape& s, Activation act,
                                           const uint8_t* argmax, const float* y, const float* dy,
                                           float* dx) {
  const int P = s.P(), Q = s.Q();
  if (s.window == 2 && s.stride == 2 && s.pad == 0) {
    // The LeNet case: windows tile the plane; each writes its four pixels, and only an odd last
    // row / column is left to clear.
    for (int p = 0; p < P; ++p) {
      float* d0 = dx + size_t(2 * p) * s.W;
      float* d1 = d0 + s.W;
      for (int q = 0; q < Q; ++q) {
        const size_t o = size_t(p) * Q + q;
        const float g = activation_grad(act, dy, y, o);
        const int best = argmax[o];
        d0[2 * q] = best == 0 ? g : 0.f;
        d0[2 * q + 1] = best == 1 ? g : 0.f;
        d1[2 * q] = best == 2 ? g : 0.f;
        d1[2 * q + 1] = best == 3 ? g : 0.f;
      }
      for (int w = 2 * Q; w < s.W; ++w) d0[w] = d1[w] = 0.f;
    }
    for (size_t i = size_t(2 * P) * s.W; i < size_t(s.H) * s.W; ++i) dx[i] = 0.f;
    return;
  }
  serial::max_pool_backward_argmax_plane(s, act, argmax, y, dy, dx);
}

// One output row of a 2x2, stride-2 max pool backward: input rows x0, x1 -> dx rows d0, d1
// (their first 2Q entries): dy goes to each window's first maximum in order a b / c d, zeros
// elsewhere. Branch-free: which of the four wins is data-dependent and mispredicts as a branch.
inline void max2x2_backward_row(int Q, const float* x0, const float* x1, const float* dy,
                                float* d0, float* d1) {
  int q0 = 0;
#if defined(__AVX512F__)
  // 16 windows at a time: de-interleave the two input rows into a b c d, compare, re-interleave.
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512i zip_lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i zip_hi =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  for (; q0 < Q; q0 += 16) {
    const int n = std::min(16, Q - q0);
    const __mmask16 m_lo = __mmask16((1u << std::min(2 * n, 16)) - 1u);
    const __mmask16 m_hi = __mmask16((1u << std::max(2 * n - 16, 0)) - 1u);
    const __mmask16 m_g = __mmask16((1u << n) - 1u);
    const size_t at = size_t(2 * q0);
    const __m512 r0lo = _mm512_maskz_loadu_ps(m_lo, x0 + at);
    const __m512 r0hi = _mm512_maskz_loadu_ps(m_hi, x0 + at + 16);
    const __m512 r1lo = _mm512_maskz_loadu_ps(m_lo, x1 + at);
    const __m512 r1hi = _mm512_maskz_loadu_ps(m_hi, x1 + at + 16);
    const __m512 a = _mm512_permutex2var_ps(r0lo, even, r0hi);
    const __m512 b = _mm512_permutex2var_ps(r0lo, odd, r0hi);
    const __m512 c = _mm512_permutex2var_ps(r1lo, even, r1hi);
    const __m512 d = _mm512_permutex2var_ps(r1lo, odd, r1hi);
    // Ordered, non-signalling > is C++'s >: a NaN never wins, as in the serial loop.
    const __mmask16 gb = _mm512_cmp_ps_mask(b, a, _CMP_GT_OQ);
    __m512 m = _mm512_mask_blend_ps(gb, a, b);
    const __mmask16 gc = _mm512_cmp_ps_mask(c, m, _CMP_GT_OQ);
    m = _mm512_mask_blend_ps(gc, m, c);
    const __mmask16 gd = _mm512_cmp_ps_mask(d, m, _CMP_GT_OQ);
    const __m512 g = _mm512_maskz_loadu_ps(m_g, dy + q0);
    const __m512 ga = _mm512_maskz_mov_ps(__mmask16(~(gb | gc | gd)), g);
    const __m512 gbv = _mm512_maskz_mov_ps(__mmask16(gb & ~gc & ~gd), g);
    const __m512 gcv = _mm512_maskz_mov_ps(__mmask16(gc & ~gd), g);
    const __m512 gdv = _mm512_maskz_mov_ps(gd, g);
    _mm512_mask_storeu_ps(d0 + at, m_lo, _mm512_permutex2var_ps(ga, zip_lo, gbv));
    _mm512_mask_storeu_ps(d0 + at + 16, m_hi, _mm512_permutex2var_ps(ga, zip_hi, gbv));
    _mm512_mask_storeu_ps(d1 + at, m_lo, _mm512_permutex2var_ps(gcv, zip_lo, gdv));
    _mm512_mask_storeu_ps(d1 + at + 16, m_hi, _mm512_permutex2var_ps(gcv, zip_hi, gdv));
  }
#endif
  for (int q = q0; q < Q; ++q) {
    const float a = x0[2 * q], b = x0[2 * q + 1], c = x1[2 * q], d = x1[2 * q + 1];
    int best = b > a ? 1 : 0;
    float m = b > a ? b : a;
    best = c > m ? 2 : best;
    m = c > m ? c : m;
    best = d > m ? 3 : best;
    const float g = dy[q];
    d0[2 * q] = best == 0 ? g : 0.f;
    d0[2 * q + 1] = best == 1 ? g : 0.f;
    d1[2 * q] = best == 2 ? g : 0.f;
    d1[2 * q + 1] = best == 3 ? g : 0.f;
  }
}

// x (H,W), dy (P,Q) -> dx (H,W); overwrites dx. Max routes to the argmax recomputed from x.
inline void pool_backward_plane(PoolKind kind, const Pool2dShape& s, const float* x,
                                const float* dy, float* dx) {
  const int P = s.P(), Q = s.Q(), win = s.window, st = s.stride;
  if (kind == PoolKind::Max && win == 2 && st == 2 && s.pad == 0) {
    // The LeNet case: windows tile the plane, so every covered pixel is written once (g at the
    // window's first maximum, 0 elsewhere) and only an odd last row / column is left to clear.
    for (int p = 0; p < P; ++p) {
      float* d0 = dx + size_t(2 * p) * s.W;
      max2x2_backward_row(Q, x + size_t(2 * p) * s.W, x + size_t(2 * p + 1) * s.W,
                          dy + size_t(p) * Q, d0, d0 + s.W);
      float* d1 = d0 + s.W;
      for (int w = 2 * Q; w < s.W; ++w) d0[w] = d1[w] = 0.f;
    }
    for (size_t i = size_t(2 * P) * s.W; i < size_t(s.H) * s.W; ++i) dx[i] = 0.f;
    return;
  }
  serial::pool_backward_plane(kind, s, x, dy, dx);
}

}  // namespace pcnn::omp
