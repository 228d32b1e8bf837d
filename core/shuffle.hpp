// The shuffle every backend uses: a keyed bijection of [0, n), computed per index, so that a GPU
// can draw batch j of epoch e without a permutation array and every backend sees the same order.
// A 4-round Feistel network on the smallest even power of two >= n, walked until it lands < n.
#pragma once

#include <cstdint>

#include "core/host_device.hpp"

namespace pcnn {

PCNN_HD inline uint32_t mix32(uint32_t x) {
  // Murmur3's finaliser: a cheap, well-spread hash.
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  x *= 0xc2b2ae35u;
  x ^= x >> 16;
  return x;
}

PCNN_HD inline uint32_t epoch_seed(uint32_t seed, uint32_t epoch) {
  return mix32(seed * 0x9e3779b9u + epoch + 1u);
}

// A bijection of [0, n), n <= 2^30. With key == 0 it is the identity (no shuffle).
PCNN_HD inline uint32_t shuffle_index(uint32_t i, uint32_t n, uint32_t key) {
  if (key == 0 || n <= 1) return i;
  uint32_t half_bits = 1;
  while ((1u << (2 * half_bits)) < n) ++half_bits;
  const uint32_t mask = (1u << half_bits) - 1u;
  uint32_t x = i;
  do {  // cycle-walking keeps the result inside [0, n); it ends because the map is a bijection
    uint32_t left = x >> half_bits, right = x & mask;
    for (uint32_t round = 0; round < 4; ++round) {
      uint32_t f = mix32(right ^ (key + round * 0x632be5abu)) & mask;
      uint32_t next = left ^ f;
      left = right;
      right = next;
    }
    x = (left << half_bits) | right;
  } while (x >= n);
  return x;
}

}  // namespace pcnn
