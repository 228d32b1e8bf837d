// Serial optimizers over the whole parameter arena.
#include "backends/serial/serial_backend.hpp"
#include "core/optimizer_math.hpp"

namespace pcnn {

void SerialBackend::sgd_update(size_t n, float* params, const float* grads, float* velocity,
                               const float* hyper) {
  const SgdHyper h = SgdHyper::from(hyper);
  if (h.skip) return;  // check_step found this step not finite
  for (size_t i = 0; i < n; ++i) sgd_step(h, params[i], grads[i], velocity[i]);
}

void SerialBackend::adam_update(size_t n, float* params, const float* grads, float* m, float* v,
                                const float* hyper, const int32_t* step) {
  const AdamHyper h = AdamHyper::from(hyper, *step);
  if (h.skip) return;
  for (size_t i = 0; i < n; ++i) adam_step(h, params[i], grads[i], m[i], v[i]);
}

}  // namespace pcnn
