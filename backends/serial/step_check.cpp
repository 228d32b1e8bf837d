// Serial check of a training step for NaN and Inf: the readable reference of check_step.
#include "backends/serial/serial_backend.hpp"
#include "core/step_check_math.hpp"

namespace pcnn {

// grads (n), metrics float[kMetricCount], hyper float[kHyperCount]; *step: the global step
void SerialBackend::check_step(size_t n, const float* grads, const int32_t* step,
                               float* metrics, float* hyper) {
  uint32_t first_bad = kAllFinite;
  for (size_t i = 0; i < n; ++i)
    if (!is_finite_float(grads[i])) {
      first_bad = uint32_t(i);
      break;
    }
  finish_step_check(first_bad, *step, metrics, hyper);
}

}  // namespace pcnn
