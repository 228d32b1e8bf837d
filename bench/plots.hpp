// The bench's SVG figures: speedup and throughput against batch size, per-layer time bars, and
// strong scaling against thread count.
#pragma once

#include <string>
#include <vector>

#include "bench/bench_run.hpp"

namespace pcnn::bench {

// Writes into dir (which must exist), per model: speedup_<model>.svg,
// layers_<model>_b<batch>.svg for each batch with a breakdown, and scaling_<model>.svg when a CPU
// backend ran at several thread counts. Returns the paths written.
std::vector<std::string> write_bench_plots(const std::string& dir, const BenchReport& r);

}  // namespace pcnn::bench
