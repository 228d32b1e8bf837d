// The doctest side of the harness: the backend under test (chosen with --backend on the command
// line) and the serial reference, device round trips, and check_close, which reports a mismatch
// with the backend, the case and the first mismatching indices (tests/compare.hpp judges).
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/device_array.hpp"
#include "tests/compare.hpp"

namespace pcnn::test {

Backend& backend();    // the backend under test
Backend& reference();  // serial
const std::string& backend_name();

// A host vector copied to a backend, and back.
template <class T>
DeviceArray<T> to_device(Backend& be, const std::vector<T>& host) {
  return DeviceArray<T>(be, host);
}

// Checks got against want (tests/compare.hpp); a failure names the backend and `what`.
void check_close(const std::string& what, const std::vector<float>& got,
                 const std::vector<float>& want, double tol);

}  // namespace pcnn::test
