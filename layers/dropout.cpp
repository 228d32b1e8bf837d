// Dropout: the training pass calls the dropout ops; inference (and a backward after an inference
// forward, as gradient checks do) copies.
#include "layers/dropout.hpp"

#include <sstream>

#include "core/check.hpp"

namespace pcnn {

Dropout::Dropout(FeatureShape in, float rate, uint32_t salt) : rate_(rate), salt_(salt) {
  PCNN_CHECK(rate >= 0.f && rate < 1.f, "dropout rate " << rate << " is outside [0, 1)");
  in_ = out_ = in;
}

std::string Dropout::describe() const {
  std::ostringstream os;
  os << "dropout " << rate_;
  return os.str();
}

void Dropout::forward(Backend& be, int N, const float* x, float* y) {
  const size_t n = size_t(N) * in_.size();
  if (!pass_.training) {
    be.copy(y, x, n * sizeof(float));
    return;
  }
  PCNN_CHECK(pass_.step, "dropout: a training pass needs the step counter");
  be.dropout_forward(n, rate_, pass_.seed, salt_, pass_.step, x, y);
}

void Dropout::backward(Backend& be, int N, const float*, const float*, const float* dy,
                       float* dx) {
  if (!dx) return;
  const size_t n = size_t(N) * in_.size();
  if (!pass_.training) {
    be.copy(dx, dy, n * sizeof(float));
    return;
  }
  be.dropout_backward(n, rate_, pass_.seed, salt_, pass_.step, dy, dx);
}

}  // namespace pcnn
