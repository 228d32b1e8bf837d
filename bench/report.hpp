// Bench results out: the terminal table, bench.json (which child processes also speak), and
// CSV files for spreadsheets.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "bench/bench_run.hpp"
#include "bench/decomposition.hpp"

namespace pcnn::bench {

// GFLOP/s of flops done in seconds (0 when either is not known).
double gflops(double flops, double seconds);

// One backend against another at one model and batch size, both measured in the same run:
// ratio = the other's step time / this one's (> 1: this one is faster). Where a backend ran at
// several thread counts, its fastest run stands for it.
struct HeadToHead {
  std::string backend, versus, model;
  int batch = 0;
  double images_per_s = 0, versus_images_per_s = 0, ratio = 0;
};
// The pairs people ask about, where both ran: each backend against those its registry entry is
// compared with (cuda vs cudnn: hand-tuned vs vendor library; cuda vs kokkos: the portability
// cost on a GPU; openmp vs serial; kokkos vs openmp: the same on a CPU), in registry order.
std::vector<HeadToHead> head_to_head(const BenchReport& r);

// The summary table, the head-to-head ratios, the speedup decomposition, then one per-layer table per model and batch that
// has a breakdown.
void print_report(std::FILE* out, const BenchReport& r);

nlohmann::json to_json(const BenchReport& r);
// Reads what to_json wrote. Throws nlohmann::json exceptions on a malformed document.
BenchReport report_from_json(const nlohmann::json& j);

// One row per run (times in ms). Throws Error on I/O.
void write_runs_csv(const std::string& path, const BenchReport& r);
// One row per layer (and loss, update) of every run with a breakdown.
void write_layers_csv(const std::string& path, const BenchReport& r);

}  // namespace pcnn::bench
