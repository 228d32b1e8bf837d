// OpenMP inverted dropout: static contiguous shares of the elements; each element's mask is a
// pure function of its index (core/dropout_math.hpp), so the split changes nothing.
#include "backends/openmp/openmp_backend.hpp"
#include "backends/openmp/parallel.hpp"
#include "core/dropout_math.hpp"

namespace pcnn {

void OpenMPBackend::dropout_forward(size_t n, float rate, uint32_t seed, uint32_t salt,
                                    const int32_t* step, const float* x, float* y) {
  const DropoutMask mask = dropout_mask(rate, seed, salt, *step);
  const int team = omp::team_for(n, threads_);
  const long long count = (long long)n;
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (long long i = 0; i < count; ++i)
    y[i] = mask.apply(x[i], uint64_t(i));
}

// The forward's mask, drawn again from the same step.
void OpenMPBackend::dropout_backward(size_t n, float rate, uint32_t seed, uint32_t salt,
                                     const int32_t* step, const float* dy, float* dx) {
  dropout_forward(n, rate, seed, salt, step, dy, dx);
}

}  // namespace pcnn
