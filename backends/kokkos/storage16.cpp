// Kokkos 16-bit storage conversions (core/precision.hpp): one element per iteration.
#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"

namespace pcnn {

using namespace kk;

void KokkosBackend::round_to_16bit(Precision p, size_t n, const float* x, const float* scale,
                                   uint16_t* y) {
  PCNN_KK_REGION(round_to_16bit);
  Kokkos::parallel_for("pcnn::round_to_16bit", range(n), KOKKOS_LAMBDA(size_t i) {
    const float v = scale ? x[i] * *scale : x[i];
    y[i] = round_to_storage(p, v);
  });
}

void KokkosBackend::widen_16bit(Precision p, size_t n, const uint16_t* x, float* y) {
  PCNN_KK_REGION(widen_16bit);
  Kokkos::parallel_for("pcnn::widen_16bit", range(n), KOKKOS_LAMBDA(size_t i) {
    y[i] = widen_from_storage(p, x[i]);
  });
}

}  // namespace pcnn
