// OpenMP optimizers: the parameter arena split into contiguous shares, one element per update, so
// the result is the serial one bit for bit. Each thread runs a plain loop over its share: written
// as `omp parallel for simd`, GCC 12 kept the update scalar (a 61k-parameter Adam step took 125 us
// on one thread against serial's 8 us, AMD EPYC).
#include "backends/openmp/openmp_backend.hpp"
#include "backends/openmp/parallel.hpp"
#include "core/optimizer_math.hpp"

namespace pcnn {

// params, grads, velocity (n); hyper float[kHyperCount]
void OpenMPBackend::sgd_update(size_t n, float* params, const float* grads, float* velocity,
                               const float* hyper) {
  const SgdHyper h = SgdHyper::from(hyper);
  if (h.skip) return;  // check_step found this step not finite
  omp::for_shares(n, omp::team_for(n, threads_), [&](size_t begin, size_t end) {
    const SgdHyper local = h;  // a copy the loop's stores cannot alias
    for (size_t i = begin; i < end; ++i) sgd_step(local, params[i], grads[i], velocity[i]);
  });
}

// params, grads, m, v (n); hyper float[kHyperCount]; step: t = *step + 1
void OpenMPBackend::adam_update(size_t n, float* params, const float* grads, float* m, float* v,
                                const float* hyper, const int32_t* step) {
  const AdamHyper h = AdamHyper::from(hyper, *step);
  if (h.skip) return;
  omp::for_shares(n, omp::team_for(n, threads_), [&](size_t begin, size_t end) {
    const AdamHyper local = h;
    for (size_t i = begin; i < end; ++i) adam_step(local, params[i], grads[i], m[i], v[i]);
  });
}

}  // namespace pcnn
