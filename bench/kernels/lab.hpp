// What every kernel-lab program shares: the cuda backend and the serial reference side by side,
// random device inputs, the normalised-error check, and a CUDA-event timer that reports the
// median of many repeats. Lab programs call the backend's own launchers (backends/cuda/*.cuh),
// never copies of them.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/serial/serial_backend.hpp"

namespace pcnn::lab {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

// A device buffer of the lab's backend, freed on scope exit.
class Buffer {
 public:
  Buffer(CudaBackend& be, size_t floats) : be_(be), n_(floats) {
    p_ = static_cast<float*>(be.allocate(floats * sizeof(float) + 16));
  }
  Buffer(CudaBackend& be, const std::vector<float>& host) : Buffer(be, host.size()) {
    be.upload(p_, host.data(), host.size() * sizeof(float));
  }
  ~Buffer() { be_.deallocate(p_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  float* get() const { return p_; }
  size_t size() const { return n_; }
  void poison() { be_.fill(p_, NAN, n_); }  // unwritten outputs then fail the check
  std::vector<float> download() const {
    std::vector<float> h(n_);
    be_.download(h.data(), p_, n_ * sizeof(float));
    return h;
  }

 private:
  CudaBackend& be_;
  float* p_ = nullptr;
  size_t n_ = 0;
};

// ||got - want|| / ||want||; +inf when got has a NaN/Inf or the sizes differ.
inline double rel_error(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    const double d = double(got[i]) - want[i];
    num += d * d;
    den += double(want[i]) * want[i];
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

// Counts failed checks over the whole program; main returns it.
inline int& failures() {
  static int n = 0;
  return n;
}

inline bool check(const std::string& what, const std::vector<float>& got,
                  const std::vector<float>& want, double tol = 1e-4) {
  const double e = rel_error(got, want);
  const bool ok = e <= tol;
  if (!ok) {
    ++failures();
    std::printf("  FAIL %-58s rel.err %.2e (tol %.0e)\n", what.c_str(), e, tol);
  }
  return ok;
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

inline void print_header(const char* title) {
  std::printf("\n== %s\n%-46s %-22s %10s %9s %8s %9s\n", title, "case", "variant", "us",
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
