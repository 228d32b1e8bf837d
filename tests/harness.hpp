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
#include "train/trainer.hpp"

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

// Checks that a and b hold equal values in each field named (pointers to members of T); a
// failure shows both values and names `what` and the field's place in the list (from 0).
template <class T, class... F>
void check_same_fields(const std::string& what, const T& a, const T& b, F T::*... fields) {
  int place = 0;
  const auto check = [&](auto field) {
    CHECK_MESSAGE(a.*field == b.*field, what << ", field " << place);
    ++place;
  };
  (check(fields), ...);
}

// The tests' short training runs: Adam with this batch, seed and learning rate; the rest as
// TrainConfig has it.
TrainConfig adam_config(int batch, uint32_t seed, float lr);

}  // namespace pcnn::test
