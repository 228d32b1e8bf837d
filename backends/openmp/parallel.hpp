// Tuning constants shared by the openmp kernels.
#pragma once

#include <cstddef>

namespace pcnn::omp {

// Element-wise kernels below this many elements run on the calling thread: waking the team
// costs more than the loop.
constexpr size_t kMinParallel = 8192;

// GEMMs below this many multiply-adds run on the calling thread.
constexpr double kMinParallelMacs = 32768;

}  // namespace pcnn::omp
