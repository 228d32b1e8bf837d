// The doctest side of the harness: the backend under test (chosen with --backend on the command
// line) and the serial reference, device round trips, check_close, which reports a mismatch
// with the backend, the case and the first mismatching indices (tests/compare.hpp judges), and
// train_run, the short whole-model training run that the model tests compare across backends.
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

// What a whole-model training run leaves, for comparing a backend's run with serial's.
struct TrainedRun {
  std::vector<double> train_losses;  // per epoch
  std::vector<double> eval_losses;   // per epoch, after its training (inference mode)
  std::vector<float> params, state;  // after the last epoch
};

// Trains a model of `spec` (weights from model_seed, batches of cfg.batch) on `data` for `epochs`
// epochs, inputs normalised by {0.2, 3}, evaluating on `data` after each.
TrainedRun train_run(Backend& be, const ModelSpec& spec, uint64_t model_seed, const Dataset& data,
                     const TrainConfig& cfg, int epochs);

// Checks a backend's run against serial's: each epoch's training and evaluation loss within `tol`
// relative (+ 1e-5 absolute), the parameters and the state (running statistics) by check_close.
void check_run_close(const std::string& what, const TrainedRun& got, const TrainedRun& want,
                     double tol);

}  // namespace pcnn::test
