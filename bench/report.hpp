// Bench results out: the terminal table, bench.json (which child processes also speak), and
// CSV files for spreadsheets.
#pragma once

#include <cstdio>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "bench/bench_run.hpp"

namespace pcnn::bench {

// GFLOP/s of flops done in seconds (0 when either is not known).
double gflops(double flops, double seconds);

// The summary table, then one per-layer table per model and batch that has a breakdown.
void print_report(std::FILE* out, const BenchReport& r);

nlohmann::json to_json(const BenchReport& r);
// Reads what to_json wrote. Throws nlohmann::json exceptions on a malformed document.
BenchReport report_from_json(const nlohmann::json& j);

// One row per run (times in ms). Throws Error on I/O.
void write_runs_csv(const std::string& path, const BenchReport& r);
// One row per layer (and loss, update) of every run with a breakdown.
void write_layers_csv(const std::string& path, const BenchReport& r);

}  // namespace pcnn::bench
