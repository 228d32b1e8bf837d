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
#include <vector>

#include "core/host_device.hpp"

namespace pcnn {

enum class Precision { F32, BF16, F16 };

inline const char* precision_name(Precision p) {
  return p == Precision::BF16 ? "bf16" : p == Precision::F16 ? "fp16" : "fp32";
}
inline constexpr Precision kPrecisions[] = {Precision::F32, Precision::BF16, Precision::F16};
inline std::optional<Precision> find_precision(const std::string& name) {
  for (Precision p : kPrecisions)
    if (name == precision_name(p)) return p;
  return std::nullopt;
}
// Every precision's name, in kPrecisions' order (what a command line accepts).
inline std::vector<std::string> precision_names() {
  std::vector<std::string> names;
  for (Precision p : kPrecisions) names.push_back(precision_name(p));
  return names;
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

// float -> bf16, round to nearest even. Every NaN becomes the one quiet 0x7fc0 (a payload only in
// the low bits would otherwise round to infinity).
PCNN_HD inline uint16_t float_to_bf16(float f) {
  const uint32_t u = float_bits(f);
  // sign and payload dropped: hardware differs in the NaN a product of NaN gives (x86 keeps
  // the operand's, a GPU gives its own 0x7fffffff), and the stored bits must not tell them apart
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
PCNN_HD inline float bf16_to_float(uint16_t h) { return bits_float(uint32_t(h) << 16); }

// float -> IEEE half, round to nearest even, subnormals kept, overflow to infinity. Every path
// is straight arithmetic, so a compiler turns the branches into selects and vectorises a loop
// of conversions (the openmp backend's: a branchy form cost 56 % of a LeNet-5 step).
PCNN_HD inline uint16_t float_to_f16(float f) {
  const uint32_t u = float_bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7fffffffu;
  // normal: rebias the exponent 127 -> 15 and round the 13 dropped bits (a carry moves into
  // the exponent, up to 0x7bff at most below 65520)
  uint32_t h = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
  // below 2^-14: 0.5 + |f| in float rounds |f| to a multiple of 0.5's ulp, 2^-24, which is the
  // subnormal's unit; the difference of the bits counts those units (0x400: the least normal)
  if (a < 0x38800000u) h = float_bits(bits_float(a) + 0.5f) - 0x3f000000u;
  if (a >= 0x477ff000u) h = 0x7c00u;  // 65520 and up round to infinity
  // NaN: one quiet pattern without the sign, as float_to_bf16 (a select, not a branch)
  const bool nan = a > 0x7f800000u;
  if (nan) h = 0x7e00u;
  return uint16_t((nan ? 0u : sign) | h);
}
PCNN_HD inline float f16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  uint32_t bits = (em << 13) + 0x38000000u;  // exponent rebiased 15 -> 127, mantissa in place
  if (em >= 0x7c00u) bits += 0x38000000u;    // infinity, NaN: exponent 255
  float v = bits_float(bits);
  // zero and subnormals: (2^-14 + m 2^-24) - 2^-14 = m 2^-24, exact
  if (em < 0x0400u) v = bits_float(bits + 0x00800000u) - bits_float(0x38800000u);
  return bits_float(float_bits(v) | sign);
}

// The two 16-bit precisions by value (p != F32).
PCNN_HD inline uint16_t round_to_storage(Precision p, float f) {
  return p == Precision::BF16 ? float_to_bf16(f) : float_to_f16(f);
}
PCNN_HD inline float widen_from_storage(Precision p, uint16_t h) {
  return p == Precision::BF16 ? bf16_to_float(h) : f16_to_float(h);
}

// Which fused 16-bit ops of a backend widen into the staging floats their caller passes
// (Backend::stages_16bit): the composed defaults do; a backend whose kernels read and write 16
// bits themselves does not, and is passed none. The layers size the staging the model allocates
// (and the memory reports count) by it.
struct Staging16 {
  bool conv = true;   // conv2d_fused_forward_16 / conv2d_fused_backward_16
  bool dense = true;  // linear_forward_16 / linear_backward_16
};

// fp16's dynamic loss scale (hyper[kHyperLossScale], core/contract_types.hpp): the loss
// gradient is multiplied by it before it is stored in 16 bits, and the parameter gradients
// divided by it before the update. Halved after a step that was not finite, doubled after
// kLossScaleInterval finite ones, as PyTorch's GradScaler does; between these bounds.
constexpr float kInitialLossScale = 32768.f;  // 2^15
constexpr float kMinLossScale = 1.f;
constexpr float kMaxLossScale = 16777216.f;  // 2^24
constexpr float kLossScaleInterval = 1000.f;

}  // namespace pcnn
