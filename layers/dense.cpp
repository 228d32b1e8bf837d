// Dense: parameters and the calls into the (optionally fused) linear entry points.
#include "layers/dense.hpp"

#include "core/vocabulary.hpp"

namespace pcnn {

Dense::Dense(FeatureShape in, int units, Activation act, InitKind init)
    : units_(units), act_(act), init_(init) {
  in_ = in;
  out_ = {units, 1, 1};
}

std::string Dense::describe() const {
  return "dense " + std::to_string(in_.size()) + "->" + std::to_string(units_) +
         (act_ == Activation::None ? "" : std::string(" +") + activation_name(act_));
}

void Dense::bind(float* params, float* grads) {
  w_ = params;
  b_ = params + size_t(units_) * in_.size();
  dw_ = grads;
  db_ = grads + size_t(units_) * in_.size();
}

void Dense::init_params(Rng& rng, float* host) const {
  const size_t nw = size_t(units_) * in_.size();
  init_weights(rng, init_, int(in_.size()), units_, host, nw);
  for (int k = 0; k < units_; ++k) host[nw + k] = 0.f;
}

void Dense::setup(Backend& be, int max_batch) {
  if (act_ != Activation::None) scratch_ = DeviceArray<float>(be, size_t(max_batch) * units_);
}

void Dense::forward(Backend& be, int N, const float* x, float* y) {
  be.linear_forward(N, int(in_.size()), units_, act_, x, w_, b_, y);
}

void Dense::backward(Backend& be, int N, const float* x, const float* y, const float* dy,
                     float* dx) {
  be.linear_backward(N, int(in_.size()), units_, act_, x, w_, y, dy, scratch_.get(), dx, dw_,
                     db_);
}

}  // namespace pcnn
