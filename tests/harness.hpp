// Test harness shared by every test file: the backend under test (chosen with --backend on the
// command line) and the serial reference, random inputs, device round trips, and the normalised
// error check that prints where a mismatch is.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/device_array.hpp"
#include "core/rng.hpp"

namespace pcnn::test {

Backend& backend();    // the backend under test
Backend& reference();  // serial
const std::string& backend_name();

// Uniform in [lo, hi): never zeros, so unwritten outputs and wrong indexing show.
std::vector<float> random_vector(size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f);

// A host vector copied to a backend, and back.
template <class T>
DeviceArray<T> to_device(Backend& be, const std::vector<T>& host) {
  return DeviceArray<T>(be, host);
}

// An output buffer filled with NaN, so that any element the kernel fails to write fails the test.
DeviceArray<float> poisoned(Backend& be, size_t n);

// ||got - want|| / max(||want||, tiny); NaN if got has a NaN or Inf.
double normalized_error(const std::vector<float>& got, const std::vector<float>& want);

// Checks got against want: finite, same size, normalised error <= tol. On failure reports the
// backend, the case, the error and the first few mismatching indices.
void check_close(const std::string& what, const std::vector<float>& got,
                 const std::vector<float>& want, double tol);

}  // namespace pcnn::test
