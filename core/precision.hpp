// Storage precisions of the activations and their gradients between layers, and the conversions
// every backend uses to and from them, written once so that each backend stores the same bits.
// fp32: IEEE single, the default (nothing is converted). bf16: the top 16 bits of a float (8-bit
// exponent, 7-bit mantissa: fp32's range, ~3 decimal digits). fp16: IEEE half (5-bit exponent,
// 10-bit mantissa: 6.1e-5 .. 65504 normal, subnormals down to 6.0e-8), which needs a loss scale
// to keep small gradients from flushing to zero. Parameters, their gradients, optimizer state,
// the loss and every accumulation stay fp32 ("mixed precision").
//
// Written by hand: the conversions must compile in CUDA and Kokkos kernels as well as host code
// and give the same bits on each (round to nearest, ties to even; NaN stays NaN; fp16 overflows
// to infinity and keeps subnormals), which no packaged header offers for both sides.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "core/host_device.hpp"

namespace pcnn {

enum class Precision { F32, BF16, F16 };

inline const char* precision_name(Precision p) {
  return p == Precision::BF16 ? "bf16" : p == Precision::F16 ? "fp16" : "fp32";
}
inline std::optional<Precision> find_precision(const std::string& name) {
  if (name == "fp32") return Precision::F32;
  if (name == "bf16") return Precision::BF16;
  if (name == "fp16") return Precision::F16;
  return std::nullopt;
}
// Bytes of one stored activation or gradient element.
inline constexpr size_t storage_bytes(Precision p) { return p == Precision::F32 ? 4 : 2; }

PCNN_HD inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
PCNN_HD inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// float -> bf16, round to nearest even. A NaN keeps its sign and becomes quiet (a payload only
// in the low bits would otherwise truncate to infinity).
PCNN_HD inline uint16_t float_to_bf16(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x0040u);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
PCNN_HD inline float bf16_to_float(uint16_t h) { return bits_float(uint32_t(h) << 16); }

// float -> IEEE half, round to nearest even, subnormals kept, overflow to infinity.
PCNN_HD inline uint16_t float_to_f16(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return uint16_t(sign | 0x7e00u);   // NaN (quiet)
  if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 rounds to infinity
  if (a >= 0x38800000u) {                                 // normal: rebias 127 -> 15
    uint32_t h = (a - 0x38000000u) >> 13;
    const uint32_t rest = a & 0x1fffu;
    h += rest > 0x1000u || (rest == 0x1000u && (h & 1u));  // a carry moves into the exponent
    return uint16_t(sign | h);
  }
  // Below 2^-14: a multiple of 2^-24 (a subnormal; 0x400 when it rounds up to the least normal).
  const uint32_t e = a >> 23;
  if (e < 102) return sign;  // under 2^-25 (zero and float subnormals too): rounds to zero
  const uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - e;  // 14 .. 24
  uint32_t q = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  q += rest > half || (rest == half && (q & 1u));
  return uint16_t(sign | q);
}
PCNN_HD inline float f16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {  // zero or subnormal: m * 2^-24, exact in float
    const float v = float(m) * (1.f / 16777216.f);
    return bits_float(float_bits(v) | sign);
  }
  if (e == 31) return bits_float(sign | 0x7f800000u | (m << 13));
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

// The two 16-bit precisions by value (p != F32).
PCNN_HD inline uint16_t round_to_storage(Precision p, float f) {
  return p == Precision::BF16 ? float_to_bf16(f) : float_to_f16(f);
}
PCNN_HD inline float widen_from_storage(Precision p, uint16_t h) {
  return p == Precision::BF16 ? bf16_to_float(h) : f16_to_float(h);
}

// fp16's dynamic loss scale (hyper[kHyperLossScale], core/contract_types.hpp): the loss
// gradient is multiplied by it before it is stored in 16 bits, and the parameter gradients
// divided by it before the update. Halved after a step that was not finite, doubled after
// kLossScaleInterval finite ones, as PyTorch's GradScaler does; between these bounds.
constexpr float kInitialLossScale = 32768.f;  // 2^15
constexpr float kMinLossScale = 1.f;
constexpr float kMaxLossScale = 16777216.f;  // 2^24
constexpr float kLossScaleInterval = 1000.f;

}  // namespace pcnn
