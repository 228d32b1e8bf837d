// One SIMD register of floats for the CPU micro-kernels (GNU vector extension), sized by the
// target ISA: 16 lanes with AVX-512, 8 with AVX/AVX2, 4 otherwise. Host compilers only.
//
// Loads and stores go through an unaligned, may_alias vector type, never __builtin_memcpy: with
// GCC's Intel tunings (prefer-vector-width=256) a 64-byte memcpy into a vector is lowered as two
// 32-byte stores to the stack and one 64-byte reload, a store-forwarding stall on every load of
// every inner loop (3-4x slower kernels on a Rocket Lake Xeon; see notes/tuning-kokkos.md).
#pragma once

#if !defined(__CUDACC__)

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

}  // namespace simd
}  // namespace kk
}  // namespace pcnn

#endif
