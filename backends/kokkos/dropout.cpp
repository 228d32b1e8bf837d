// Kokkos inverted dropout: one element per iteration, its mask from core/dropout_math.hpp; the
// step is read where the kernel runs (device memory in the CUDA build).
#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/dropout_math.hpp"

namespace pcnn {

using namespace kk;

void KokkosBackend::dropout_forward(size_t n, float rate, uint32_t seed, uint32_t salt,
                                    const int32_t* step, const float* x, float* y) {
  const uint32_t threshold = dropout_threshold(rate);
  const float scale = dropout_scale(rate);
  Kokkos::parallel_for("pcnn::dropout", range(n), KOKKOS_LAMBDA(const size_t i) {
    y[i] = dropout_apply(x[i], dropout_key(seed, salt, *step), i, threshold, scale);
  });
}

// The forward's mask, drawn again from the same step.
void KokkosBackend::dropout_backward(size_t n, float rate, uint32_t seed, uint32_t salt,
                                     const int32_t* step, const float* dy, float* dx) {
  dropout_forward(n, rate, seed, salt, step, dy, dx);
}

}  // namespace pcnn
