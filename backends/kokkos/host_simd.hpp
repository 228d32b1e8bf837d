// One SIMD register of floats for the CPU micro-kernels (GNU vector extension), sized by the
// target ISA: 16 lanes with AVX-512, 8 with AVX/AVX2, 4 otherwise. Host compilers only.
//
// Loads and stores go through an unaligned, may_alias vector type, never __builtin_memcpy: with
// GCC's Intel tunings (prefer-vector-width=256) a 64-byte memcpy into a vector is lowered as two
// 32-byte stores to the stack and one 64-byte reload, a store-forwarding stall on every load of
// every inner loop (3-4x slower kernels on a Rocket Lake Xeon; see notes/tuning-kokkos.md).
#pragma once

#if !defined(__CUDACC__)

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace pcnn {
namespace kk {
namespace simd {

#if defined(__AVX512F__)
constexpr int kLanes = 16, kRegisters = 32;
#elif defined(__AVX__)
constexpr int kLanes = 8, kRegisters = 16;
#else
constexpr int kLanes = 4, kRegisters = 16;
#endif

typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));
typedef float VecU __attribute__((vector_size(kLanes * sizeof(float)), aligned(4), may_alias));

inline Vec load(const float* p) { return *reinterpret_cast<const VecU*>(p); }
inline void store(float* p, Vec v) { *reinterpret_cast<VecU*>(p) = v; }

// p[0..n) in the first n lanes (0 <= n <= kLanes), zeros after; nothing past p + n is read, so a
// row's last register may end where the buffer ends (masked loads do not fault).
inline Vec load_first(const float* p, int n) {
#if defined(__AVX512F__)
  return Vec(_mm512_maskz_loadu_ps(__mmask16((1u << n) - 1u), p));
#elif defined(__AVX__)
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return Vec(_mm256_maskload_ps(p, _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lane)));
#else
  Vec v = {};
  for (int l = 0; l < n; ++l) v[l] = p[l];
  return v;
#endif
}

}  // namespace simd
}  // namespace kk
}  // namespace pcnn

#endif
