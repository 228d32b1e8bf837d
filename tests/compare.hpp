// How a kernel's output is judged against the reference's, shared by the tests, the op-table modes
// and the CUDA kernel lab (no doctest here): seeded random inputs that are never all zeros,
// NaN-poisoned outputs, then the check ggml's test-backend-ops makes — non-finite values first,
// then the normalised error against the case's tolerance, naming the first mismatching indices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/device_array.hpp"
#include "core/rng.hpp"

namespace pcnn::test {

// Uniform in [lo, hi) from a seeded Rng (core/rng.hpp): the same values on every platform.
std::vector<float> uniform(Rng& rng, size_t n, float lo = -1.f, float hi = 1.f);
std::vector<float> random_vector(size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f);

// Fills with NaN, so that any element a kernel fails to write fails the comparison.
void poison(Backend& be, DeviceArray<float>& a);
DeviceArray<float> poisoned(Backend& be, size_t n);

// ||got - want|| / max(||want||, tiny); NaN when got holds a NaN or Inf or the sizes differ.
double normalized_error(const std::vector<float>& got, const std::vector<float>& want);

// The verdict on one output tensor.
struct Comparison {
  bool ok = true;
  double error = 0;    // normalised error (NaN: non-finite output or size mismatch)
  std::string detail;  // empty when ok; else what failed and the first mismatching indices
};

// got against want: sizes, then NaN/Inf (an unwritten, NaN-poisoned element shows here), then
// normalised error <= tol.
Comparison compare(const std::vector<float>& got, const std::vector<float>& want, double tol);

}  // namespace pcnn::test
