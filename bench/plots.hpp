// The bench's SVG figures: speedup and throughput against batch size, each layer's share of the
// step, and the speedup decomposition (algorithmic, parallel and GPU gains).
#pragma once

#include <string>
#include <vector>

#include "bench/bench_run.hpp"

namespace pcnn::bench {

// Writes into dir (which must exist), per model: speedup_<model>.svg,
// layers_<model>_b<batch>.svg for each batch with a breakdown, gains_<model>.svg (algorithmic and
// GPU gains against batch size) where one of them is known, and scaling_<model>.svg (parallel
// gain and efficiency against threads) when a CPU backend ran at 1 thread and more. Returns the
// paths written.
std::vector<std::string> write_bench_plots(const std::string& dir, const BenchReport& r);

// The colour of a backend in every figure ("#rrggbb"; grey for a name the registry lacks).
std::string backend_color(const std::string& backend);

}  // namespace pcnn::bench
