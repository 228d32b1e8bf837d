// What every kernel-lab program shares: the cuda backend and the serial reference side by side,
// and a CUDA-event timer that reports the median of many repeats. The cases (shapes, seeded
// inputs, FLOPs and bytes), the device buffers (guard bytes, NaN-poisoned outputs) and the error
// check are the op table's (tests/op_table.hpp, tests/compare.hpp): a variant is checked exactly
// as the tests check the backend. Lab programs call the backend's own launchers
// (backends/cuda/*.cuh), never copies of them.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/serial/serial_backend.hpp"
#include "tests/compare.hpp"
#include "tests/op_table.hpp"

namespace pcnn::lab {

using test::DeviceTensors;
using test::OpCase;
using test::RunResult;

// Every variant sums in its own order, on shapes up to batch 1024: looser than the tests' 2e-5.
inline constexpr test::Tolerance kLabTol{1e-4, "kernel lab: every variant sums in its own order"};

// Counts failed checks over the whole program; main returns it.
inline int& failures() {
  static int n = 0;
  return n;
}

// The cases of `op` in the op table at batch `batch` (perf cases only if perf_only).
inline std::vector<OpCase> cases_of(Op op, int batch, bool perf_only) {
  std::vector<OpCase> out;
  for (OpCase& c : test::op_table(batch))
    if (c.op == op && (c.perf || !perf_only)) out.push_back(std::move(c));
  return out;
}

// A variant's outputs in t (guard bytes and inputs checked too) against the reference's: prints
// and counts a failure; returns the worst normalised error (NaN: non-finite or damaged).
inline double check_outputs(const std::string& what, const OpCase& c, const DeviceTensors& t,
                            const RunResult& want, test::Tolerance tol = kLabTol) {
  RunResult got;
  got.outputs = t.outputs(&got.problems);
  OpCase lab = c;
  lab.tol = tol;
  const test::Verdict v = test::compare_outputs(lab, got, want);
  if (!v.ok) {
    ++failures();
    std::printf("  FAIL %s: %s\n", what.c_str(), v.detail.c_str());
  }
  double worst = got.problems.empty() ? 0.0 : NAN;
  for (size_t i = 0; i < got.outputs.size() && i < want.outputs.size(); ++i) {
    const double e = test::normalized_error(got.outputs[i].values, want.outputs[i].values);
    worst = std::isnan(e) || std::isnan(worst) ? NAN : std::max(worst, e);
  }
  return worst;
}

// Median time in microseconds of `repeats` runs of fn on the backend's stream (CUDA events
// around each run, after `warmup` untimed runs).
inline double time_us(CudaBackend& be, const std::function<void()>& fn, int repeats = 50,
                      int warmup = 5) {
  cudaStream_t st = be.context().stream();
  for (int i = 0; i < warmup; ++i) fn();
  cudaEvent_t a, b;
  PCNN_CUDA_CHECK(cudaEventCreate(&a));
  PCNN_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<float> ms(repeats);
  for (int i = 0; i < repeats; ++i) {
    PCNN_CUDA_CHECK(cudaEventRecord(a, st));
    fn();
    PCNN_CUDA_CHECK(cudaEventRecord(b, st));
    PCNN_CUDA_CHECK(cudaEventSynchronize(b));
    PCNN_CUDA_CHECK(cudaEventElapsedTime(&ms[i], a, b));
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::nth_element(ms.begin(), ms.begin() + repeats / 2, ms.end());
  return 1000.0 * ms[repeats / 2];
}

// Median time of fn captured as a graph of `copies` back-to-back calls, per call: what a kernel
// costs inside the training step's graph, launch gaps included.
inline double time_graph_us(CudaBackend& be, const std::function<void()>& fn, int copies = 20,
                            int repeats = 20) {
  fn();  // eager once: lazily grown scratch exists before capture
  be.synchronize();
  be.graph_begin_capture();
  for (int i = 0; i < copies; ++i) fn();
  be.graph_end_capture();
  return time_us(be, [&] { be.graph_launch(); }, repeats, 3) / copies;
}

inline void print_header(const std::string& title) {
  std::printf("\n== %s\n%-46s %-22s %10s %9s %8s %9s\n", title.c_str(), "case", "variant", "us",
              "GFLOP/s", "GB/s", "rel.err");
}

inline void print_row(const std::string& name, const std::string& variant, double us,
                      double flops, double bytes, double err) {
  std::printf("%-46s %-22s %10.2f %9.1f %8.1f %9.1e\n", name.c_str(), variant.c_str(), us,
              flops / us * 1e-3, bytes / us * 1e-3, err);
}

inline void print_device(CudaBackend& be) {
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  std::printf("device: %s, %d SMs, driver %d, runtime %d\n", be.device_name().c_str(),
              be.context().sm_count(), drv, rt);
}

}  // namespace pcnn::lab
