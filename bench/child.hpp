// Running part of the bench in a child process (`pcnn bench ... --json-only`) and reading its
// JSON back: how a Kokkos thread-count sweep gets a fresh Kokkos runtime per thread count.
#pragma once

#include <string>
#include <vector>

#include "bench/bench_run.hpp"

namespace pcnn::bench {

// The bench command line that measures one backend at one thread count with the options of o.
std::vector<std::string> child_arguments(const BenchOptions& o, const std::string& backend,
                                         int threads);

// Runs exe with args, its stderr passed through; returns its report. Throws Error if it fails.
BenchReport run_child(const std::string& exe, const std::vector<std::string>& args);

}  // namespace pcnn::bench
