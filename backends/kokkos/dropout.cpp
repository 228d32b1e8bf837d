// Kokkos inverted dropout: one element per iteration, its mask from core/dropout_math.hpp.
#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/dropout_math.hpp"

namespace pcnn {

using namespace kk;

void KokkosBackend::dropout_forward(size_t n, float rate, uint32_t seed, uint32_t salt,
                                    const int32_t* step, const float* x, float* y) {
  PCNN_KK_REGION(dropout_forward);
  const uint32_t threshold = dropout_threshold(rate);
  const float scale = dropout_scale(rate);
  // On the host the step can be read here and the key hashed once; device memory is read (and
  // the key hashed) per element, in the kernel.
  const uint64_t host_key = kOnHost ? dropout_key(seed, salt, *step) : 0;
  Kokkos::parallel_for("pcnn::dropout", range(n), KOKKOS_LAMBDA(const size_t i) {
    const uint64_t key = kOnHost ? host_key : dropout_key(seed, salt, *step);
    y[i] = dropout_apply(x[i], key, i, threshold, scale);
  });
}

// The forward's mask, drawn again from the same step.
void KokkosBackend::dropout_backward(size_t n, float rate, uint32_t seed, uint32_t salt,
                                     const int32_t* step, const float* dy, float* dx) {
  PCNN_KK_REGION(dropout_backward);
  dropout_forward(n, rate, seed, salt, step, dy, dx);
}

}  // namespace pcnn
