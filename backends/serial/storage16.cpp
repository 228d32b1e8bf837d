// Serial 16-bit storage conversions (core/precision.hpp): one element at a time.
#include "backends/serial/serial_backend.hpp"

namespace pcnn {

void SerialBackend::round_to_16bit(Precision p, size_t n, const float* x, const float* scale,
                                   uint16_t* y) {
  const float s = scale ? *scale : 1.f;
  for (size_t i = 0; i < n; ++i) y[i] = round_to_storage(p, scale ? x[i] * s : x[i]);
}

void SerialBackend::widen_16bit(Precision p, size_t n, const uint16_t* x, float* y) {
  for (size_t i = 0; i < n; ++i) y[i] = widen_from_storage(p, x[i]);
}

}  // namespace pcnn
