// OpenMP optimizers: the parameter arena split statically, one element per update, so the
// result is the serial one bit for bit.
#include "backends/openmp/openmp_backend.hpp"
#include "backends/openmp/parallel.hpp"
#include "core/optimizer_math.hpp"

namespace pcnn {

// params, grads, velocity (n); hyper float[kHyperCount]
void OpenMPBackend::sgd_update(size_t n, float* params, const float* grads, float* velocity,
                               const float* hyper) {
  const SgdHyper h = SgdHyper::from(hyper);
  if (h.skip) return;  // check_step found this step not finite
  const int team = omp::team_for(n, threads_);
#pragma omp parallel for simd num_threads(team) schedule(static) if (team > 1)
  for (size_t i = 0; i < n; ++i) sgd_step(h, params[i], grads[i], velocity[i]);
}

// params, grads, m, v (n); hyper float[kHyperCount]; step: t = *step + 1
void OpenMPBackend::adam_update(size_t n, float* params, const float* grads, float* m, float* v,
                                const float* hyper, const int32_t* step) {
  const AdamHyper h = AdamHyper::from(hyper, *step);
  if (h.skip) return;
  const int team = omp::team_for(n, threads_);
#pragma omp parallel for simd num_threads(team) schedule(static) if (team > 1)
  for (size_t i = 0; i < n; ++i) adam_step(h, params[i], grads[i], m[i], v[i]);
}

}  // namespace pcnn
