// The whole benchmark: every backend x thread count x model x batch size in one process (or one
// child process per thread count where a backend cannot be set up twice in one), speedups over
// the baseline measured in the same run, and what is needed to say where it ran.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bench/build_info.hpp"
#include "bench/host_info.hpp"
#include "bench/model_bench.hpp"

namespace pcnn::bench {

struct BenchOptions {
  std::vector<std::string> models = {"lenet5", "simard2003"};
  std::vector<int> batches = {16, 64, 256, 1024};
  std::vector<std::string> backends;  // empty: every compiled-in backend, serial first
  // CPU backends; 0 = all cores; empty: the sweep 1, 2, 4, ... up to all cores (thread_sweep),
  // which the speedup decomposition needs (one thread and all of them, from one run).
  std::vector<int> threads;
  RepeatPolicy policy;
  std::string per_layer = "largest";  // largest | all | none: batch sizes with a layer breakdown
  std::string data_dir;               // a data folder (any format); empty: synthetic images
  std::string data_format;            // --data-format ("" detects it)
  int synthetic_images = 8192;
  uint64_t seed = 1;
  // The update the timed step runs: `pcnn train`'s default (adam) unless asked otherwise, so the
  // bench times the step training runs.
  std::string optimizer = "adam";
  std::string precision = "fp32";  // the activations' storage (core/precision.hpp)
  bool isolate = false;  // every (CPU backend, thread count) in its own child process
  // Then measure every CPU backend again beside a competing busy process (bench/competitor.hpp).
  bool contention = false;
  std::string exe;       // this program, for child processes (empty: no children possible)
};

struct Skipped {
  std::string backend, reason;
};

struct BenchReport {
  std::string date, command, host_cpu;
  std::string version, commit;  // pcnn's, as `pcnn --version` says them (set by the command)
  BuildInfo build;
  CpuTopology topology;
  int host_threads = 0;
  double load_before = -1, load_after = -1;  // 1-minute load averages around the run
  std::vector<double> loads_before;          // 1, 5, 15 minutes, before the run
  std::vector<std::string> compiled;  // compiled_backends(), in registry order
  std::vector<Skipped> skipped;
  std::string baseline;   // run_label() of the runs speedups are over ("" until computed)
  std::string data;       // what the images were
  BenchOptions options;
  std::vector<ModelRun> runs;
  // --contention: the CPU runs measured again while `competitor` kept a core busy.
  std::string competitor;
  std::vector<ModelRun> loaded;
};

// Progress lines (one per measured configuration) go to this callback.
using Progress = std::function<void(const std::string&)>;

// Runs everything. Unknown or not-compiled-in backend names throw Error before anything runs;
// a compiled-in backend that cannot run here becomes a Skipped entry (and a progress line).
BenchReport run_bench(const BenchOptions& o, const Progress& progress);

// Fills baseline and every run's speedup: over the reference backend (serial) if it ran, else the
// first backend listed (at its first thread count), at the same model and batch size.
void compute_speedups(BenchReport& r);

// "openmp, 2 threads", "serial", "cuda": how a run is labelled in tables and legends.
std::string run_label(const ModelRun& r);

// Whether the run's thread count says something: a CPU backend that is not sequential.
bool has_thread_count(const ModelRun& r);

// Backends that cannot be initialised twice in one process with different settings (Kokkos 3.4),
// so a thread-count sweep runs each count in a child process.
bool needs_process_per_thread_count(const std::string& backend);

}  // namespace pcnn::bench
