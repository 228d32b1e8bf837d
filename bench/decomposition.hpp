// Where a speedup over serial comes from, each ratio from runs of the same bench: on a CPU
// backend that takes a thread count, the algorithmic gain (its kernels on one thread against the
// reference's) times the parallel gain (N threads of it against one thread of it); on a GPU
// backend, its gain against the fastest CPU run at the same model and batch size.
#pragma once

#include <string>
#include <vector>

#include "bench/bench_run.hpp"

namespace pcnn::bench {

// One CPU backend at one thread count (N), model and batch size. A ratio is 0 where the run it
// needs (the reference's, or this backend's at one thread) is not in the report.
struct CpuGain {
  std::string backend, model;
  int batch = 0, threads = 0;
  double algorithmic = 0;  // reference step / this backend's step at 1 thread
  double parallel = 0;     // this backend's step at 1 thread / at N threads
  double efficiency = 0;   // parallel / N
  double total = 0;        // reference step / this backend's step at N threads
  // The spread of each ratio from the spreads of its two runs: slowest min / fastest max to
  // slowest max / fastest min (0 where the ratio is).
  double algorithmic_lo = 0, algorithmic_hi = 0, parallel_lo = 0, parallel_hi = 0;
};

// One GPU backend at one model and batch size against the fastest CPU run of the same case.
struct GpuGain {
  std::string backend, model;
  int batch = 0;
  std::string versus;  // run_label() of that CPU run
  double gain = 0;     // its step / the GPU backend's
  double gain_lo = 0, gain_hi = 0;  // spread, as CpuGain's
};

struct Decomposition {
  std::string reference;  // the backend algorithmic gains are over
  std::vector<CpuGain> cpu;  // in the order the runs were made
  std::vector<GpuGain> gpu;
};

// Computes every ratio from r.runs (medians of the step time).
Decomposition decompose(const BenchReport& r);

// Thread counts of the default CPU sweep up to n: 1, 2, 4, ... (powers of two below n), n.
std::vector<int> thread_sweep(int n);

}  // namespace pcnn::bench
