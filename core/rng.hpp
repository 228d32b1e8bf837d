// A small seeded generator (SplitMix64) with uniform and normal draws whose sequence is the same on
// every platform and standard library (std::normal_distribution's is not), so runs reproduce.
#pragma once

#include <cmath>
#include <cstdint>

namespace pcnn {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull) {}
  uint64_t next_u64() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double uniform() { return double(next_u64() >> 11) * (1.0 / 9007199254740992.0); }
  float uniform(float lo, float hi) { return lo + float(uniform()) * (hi - lo); }
  // Standard normal (Box-Muller; one draw per call keeps the sequence simple).
  float normal() {
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }

 private:
  uint64_t state_;
};

}  // namespace pcnn
