// Inverted dropout's keep-or-drop decision, written once for every backend (PCNN_HD: the CUDA
// kernels call the same code): a counter-based hash of (seed, layer salt, step, element index),
// so the mask is the same on every backend and thread count, no mask tensor is kept (backward
// draws it again), and a replayed graph draws a new mask each step (the step is read on the
// device). splitmix64's finaliser (Steele et al. 2014) mixes each input in.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/host_device.hpp"

namespace pcnn {

PCNN_HD inline uint64_t dropout_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// One layer's key for one step.
PCNN_HD inline uint64_t dropout_key(uint32_t seed, uint32_t salt, int32_t step) {
  const uint64_t base = (uint64_t(seed) << 32) | salt;
  return dropout_mix(dropout_mix(base) ^ (uint64_t(uint32_t(step)) * 0x9e3779b97f4a7c15ull));
}

// Elements whose 24-bit draw is below the threshold are dropped: P(drop) = threshold / 2^24.
// rate * 2^24 is exact in float (a power-of-two scale), so every machine gets the same integer.
inline uint32_t dropout_threshold(float rate) { return uint32_t(rate * 16777216.f); }

// What a kept element is multiplied by (computed on the host, passed to every kernel).
inline float dropout_scale(float rate) { return 1.f / (1.f - rate); }

PCNN_HD inline bool dropout_keep(uint64_t key, uint64_t i, uint32_t threshold) {
  const uint64_t h = dropout_mix(key + (i + 1) * 0x9e3779b97f4a7c15ull);
  return uint32_t(h >> 40) >= threshold;
}

// y = x * scale where kept, 0 where dropped: the forward (x) and the backward (dy) alike.
PCNN_HD inline float dropout_apply(float x, uint64_t key, uint64_t i, uint32_t threshold,
                                   float scale) {
  return dropout_keep(key, i, threshold) ? x * scale : 0.f;
}

// One step's mask, for backends that read the step counter on the host.
struct DropoutMask {
  uint64_t key;
  uint32_t threshold;
  float scale;
  PCNN_HD float apply(float x, uint64_t i) const {
    return dropout_apply(x, key, i, threshold, scale);
  }
};

inline DropoutMask dropout_mask(float rate, uint32_t seed, uint32_t salt, int32_t step) {
  return {dropout_key(seed, salt, step), dropout_threshold(rate), dropout_scale(rate)};
}

}  // namespace pcnn
