// Kokkos check of a training step for NaN and Inf, one source for the host and CUDA spaces: a
// min-reduction of the lowest faulty index into device memory (no host round trip), then one
// iteration that finishes the check.
#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/step_check_math.hpp"

namespace pcnn {

using namespace kk;

// grads (n), metrics float[kMetricCount], hyper float[kHyperCount]; *step: the global step
void KokkosBackend::check_step(size_t n, const float* grads, const int32_t* step,
                               float* metrics, float* hyper) {
  PCNN_KK_REGION(check_step);
  // The reduction's result stays on the device, in a slot allocated at the first call.
  const Kokkos::View<uint32_t, MemSpace, Unmanaged> first_bad(
      reinterpret_cast<uint32_t*>(workspace(kCheck, 1)));
  Kokkos::parallel_reduce("pcnn::check_step[reduce]", range(n),
                          KOKKOS_LAMBDA(size_t i, uint32_t& lowest) {
    if (!is_finite_float(grads[i]) && uint32_t(i) < lowest) lowest = uint32_t(i);
  }, Kokkos::Min<uint32_t, MemSpace>(first_bad));
  Kokkos::parallel_for("pcnn::check_step[finish]", solo_range(), KOKKOS_LAMBDA(size_t) {
    finish_step_check(first_bad(), *step, metrics, hyper);
  });
}

}  // namespace pcnn
