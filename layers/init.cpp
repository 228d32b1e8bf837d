// Weight initialisation: He et al. 2015 for ReLU networks, Glorot & Bengio 2010 otherwise.
#include <cmath>

#include "layers/layer.hpp"

namespace pcnn {

void init_weights(Rng& rng, InitKind kind, int fan_in, int fan_out, float* w, size_t n) {
  if (kind == InitKind::Kaiming) {
    const float stddev = std::sqrt(2.f / float(fan_in));
    for (size_t i = 0; i < n; ++i) w[i] = stddev * rng.normal();
  } else {
    const float limit = std::sqrt(6.f / float(fan_in + fan_out));
    for (size_t i = 0; i < n; ++i) w[i] = rng.uniform(-limit, limit);
  }
}

}  // namespace pcnn
