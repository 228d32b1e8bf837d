// Kokkos optimizers over the whole parameter arena; hyper-parameters and the step counter are
// read from device memory inside the kernel (see backend.hpp).
#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/optimizer_math.hpp"

namespace pcnn {

using namespace kk;

// Host space: hyper-parameters are read once (they live in host memory there) and each chunk of
// the arena is one vectorised loop. Per element, the Adam bias corrections would cost two powf
// calls and the loop would not vectorise. The device reads them in every thread.
constexpr size_t kChunk = 4096;

// params, grads, velocity (n); hyper float[kHyperCount]
void KokkosBackend::sgd_update(size_t n, float* params, const float* grads, float* velocity,
                               const float* hyper) {
  PCNN_KK_REGION(sgd_update);
  if constexpr (kOnHost) {
    const SgdHyper h = SgdHyper::from(hyper);
    if (h.skip) return;  // a step not finite
    Kokkos::parallel_for("pcnn::sgd_update", range((n + kChunk - 1) / kChunk),
                         KOKKOS_LAMBDA(size_t chunk) {
      float* __restrict__ p = params;
      const float* __restrict__ g = grads;
      float* __restrict__ v = velocity;
      const size_t end = (chunk + 1) * kChunk < n ? (chunk + 1) * kChunk : n;
#pragma omp simd
      for (size_t i = chunk * kChunk; i < end; ++i) sgd_step(h, p[i], g[i], v[i]);
    });
  } else {
    Kokkos::parallel_for("pcnn::sgd_update", range(n), KOKKOS_LAMBDA(size_t i) {
      const SgdHyper h = SgdHyper::from(hyper);
      if (!h.skip) sgd_step(h, params[i], grads[i], velocity[i]);  // skip: a step not finite
    });
  }
}

// params, grads, m, v (n); hyper float[kHyperCount]; t = *step + 1
void KokkosBackend::adam_update(size_t n, float* params, const float* grads, float* m, float* v,
                                const float* hyper, const int32_t* step) {
  PCNN_KK_REGION(adam_update);
  if constexpr (kOnHost) {
    const AdamHyper h = AdamHyper::from(hyper, *step);
    if (h.skip) return;
    Kokkos::parallel_for("pcnn::adam_update", range((n + kChunk - 1) / kChunk),
                         KOKKOS_LAMBDA(size_t chunk) {
      float* __restrict__ p = params;
      const float* __restrict__ g = grads;
      float* __restrict__ m1 = m;
      float* __restrict__ m2 = v;
      const size_t end = (chunk + 1) * kChunk < n ? (chunk + 1) * kChunk : n;
#pragma omp simd
      for (size_t i = chunk * kChunk; i < end; ++i) adam_step(h, p[i], g[i], m1[i], m2[i]);
    });
  } else {
    Kokkos::parallel_for("pcnn::adam_update", range(n), KOKKOS_LAMBDA(size_t i) {
      const AdamHyper h = AdamHyper::from(hyper, *step);
      if (!h.skip) adam_step(h, params[i], grads[i], m[i], v[i]);
    });
  }
}

// *counter += 1, on the device
void KokkosBackend::increment(int32_t* counter) {
  PCNN_KK_REGION(increment);
  Kokkos::parallel_for("pcnn::increment", solo_range(), KOKKOS_LAMBDA(size_t) { *counter += 1; });
}

}  // namespace pcnn
