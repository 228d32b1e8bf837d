// Size arithmetic that cannot wrap. Sizes read from untrusted input (IDX headers, model specs,
// model files) are multiplied here, so a crafted file is refused instead of passing a check with
// a product that wrapped past 2^64.
#pragma once

#include <climits>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <type_traits>

namespace pcnn {

// The largest element count of one tensor (and one sample's features): backends index with int.
constexpr uint64_t kMaxElements = uint64_t(INT_MAX);

// The product of non-negative sizes, or nullopt when it does not fit in 64 bits.
template <class Range>
std::optional<uint64_t> checked_product(const Range& sizes) {
  uint64_t p = 1;
  for (const auto s : sizes) {
    if constexpr (std::is_signed_v<std::decay_t<decltype(s)>>)
      if (s < 0) return std::nullopt;
    if (__builtin_mul_overflow(p, uint64_t(s), &p)) return std::nullopt;
  }
  return p;
}

// Convenience for a fixed list: checked_product({c, h, w}).
inline std::optional<uint64_t> checked_product(std::initializer_list<int64_t> sizes) {
  return checked_product<std::initializer_list<int64_t>>(sizes);
}

}  // namespace pcnn
