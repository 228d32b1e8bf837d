// Serial inverted dropout: the mask from core/dropout_math.hpp, element by element.
#include "backends/serial/serial_backend.hpp"
#include "core/dropout_math.hpp"

namespace pcnn {

void SerialBackend::dropout_forward(size_t n, float rate, uint32_t seed, uint32_t salt,
                                    const int32_t* step, const float* x, float* y) {
  const DropoutMask mask = dropout_mask(rate, seed, salt, *step);
  for (size_t i = 0; i < n; ++i) y[i] = mask.apply(x[i], i);
}

// The forward's mask, drawn again from the same step.
void SerialBackend::dropout_backward(size_t n, float rate, uint32_t seed, uint32_t salt,
                                     const int32_t* step, const float* dy, float* dx) {
  dropout_forward(n, rate, seed, salt, step, dy, dx);
}

}  // namespace pcnn
