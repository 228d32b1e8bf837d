// Kokkos optimizers over the whole parameter arena; hyper-parameters and the step counter are
// read from device memory inside the kernel (see backend.hpp).
#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/optimizer_math.hpp"

namespace pcnn {

using namespace kk;

// params, grads, velocity (n); hyper float[kHyperCount]
void KokkosBackend::sgd_update(size_t n, float* params, const float* grads, float* velocity,
                               const float* hyper) {
  Kokkos::parallel_for("pcnn::sgd_update", range(n), KOKKOS_LAMBDA(size_t i) {
    const SgdHyper h = SgdHyper::from(hyper);
    if (!h.skip) sgd_step(h, params[i], grads[i], velocity[i]);  // skip: a step not finite
  });
}

// params, grads, m, v (n); hyper float[kHyperCount]; t = *step + 1
void KokkosBackend::adam_update(size_t n, float* params, const float* grads, float* m, float* v,
                                const float* hyper, const int32_t* step) {
  Kokkos::parallel_for("pcnn::adam_update", range(n), KOKKOS_LAMBDA(size_t i) {
    const AdamHyper h = AdamHyper::from(hyper, *step);
    if (!h.skip) adam_step(h, params[i], grads[i], m[i], v[i]);
  });
}

// *counter += 1, on the device
void KokkosBackend::increment(int32_t* counter) {
  Kokkos::parallel_for("pcnn::increment", range(1), KOKKOS_LAMBDA(size_t) { *counter += 1; });
}

}  // namespace pcnn
