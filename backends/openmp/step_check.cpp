// OpenMP check of a training step for NaN and Inf: the lowest faulty index is a min-reduction
// over the arena (the same whatever the thread count), then one thread finishes the check.
#include <algorithm>

#include "backends/openmp/openmp_backend.hpp"
#include "backends/openmp/parallel.hpp"
#include "core/step_check_math.hpp"

namespace pcnn {

// grads (n), metrics float[kMetricCount], hyper float[kHyperCount]; *step: the global step
void OpenMPBackend::check_step(size_t n, const float* grads, const int32_t* step,
                               float* metrics, float* hyper) {
  uint32_t first_bad = kAllFinite;
  const int team = omp::team_for(n, threads_);
#pragma omp parallel for simd num_threads(team) schedule(static) if (team > 1) \
    reduction(min : first_bad)
  for (size_t i = 0; i < n; ++i)
    if (!is_finite_float(grads[i])) first_bad = std::min(first_bad, uint32_t(i));
  finish_step_check(first_bad, *step, metrics, hyper);
}

}  // namespace pcnn
