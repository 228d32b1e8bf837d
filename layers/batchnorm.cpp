// BatchNorm2D: its parameters and state in the model's arenas, and the calls into the
// batch-normalisation ops (training or inference, as the pass says).
#include "layers/batchnorm.hpp"

#include <sstream>

namespace pcnn {

BatchNorm2D::BatchNorm2D(FeatureShape in, float eps, float momentum, Activation act)
    : eps_(eps), momentum_(momentum), act_(act) {
  in_ = in;
  out_ = in;
}

std::string BatchNorm2D::describe() const {
  std::ostringstream os;
  os << "batchnorm x" << in_.c;
  if (eps_ != 1e-5f) os << " eps " << eps_;
  if (momentum_ != 0.1f) os << " momentum " << momentum_;
  if (act_ != Activation::None) os << " +" << activation_name(act_);
  return os.str();
}

void BatchNorm2D::bind(float* params, float* grads) {
  gamma_ = params;
  beta_ = params + in_.c;
  dgamma_ = grads;
  dbeta_ = grads + in_.c;
}

void BatchNorm2D::init_params(Rng&, float* host) const {
  for (int c = 0; c < in_.c; ++c) {
    host[c] = 1.f;
    host[in_.c + c] = 0.f;
  }
}

void BatchNorm2D::bind_state(float* state) {
  running_mean_ = state;
  running_var_ = state + in_.c;
}

void BatchNorm2D::init_state(float* host) const {
  for (int c = 0; c < in_.c; ++c) {
    host[c] = 0.f;
    host[in_.c + c] = 1.f;
  }
}

void BatchNorm2D::setup(Backend& be, int) {
  save_mean_ = DeviceArray<float>(be, size_t(in_.c));
  save_inv_std_ = DeviceArray<float>(be, size_t(in_.c));
  // A backward before any training forward (a bench of the backward alone) reads finite values.
  be.fill(save_mean_.get(), 0.f, size_t(in_.c));
  be.fill(save_inv_std_.get(), 1.f, size_t(in_.c));
}

void BatchNorm2D::forward(Backend& be, int N, const float* x, float* y) {
  if (pass_.training)
    be.batchnorm_forward_train(N, in_.c, hw(), act_, eps_, momentum_, x, gamma_, beta_, y,
                               save_mean_.get(), save_inv_std_.get(), running_mean_,
                               running_var_);
  else
    be.batchnorm_forward_infer(N, in_.c, hw(), act_, eps_, x, gamma_, beta_, running_mean_,
                               running_var_, y);
}

void BatchNorm2D::backward(Backend& be, int N, const float* x, const float* y, const float* dy,
                           float* dx) {
  be.batchnorm_backward(N, in_.c, hw(), act_, x, y, dy, gamma_, save_mean_.get(),
                        save_inv_std_.get(), dx, dgamma_, dbeta_);
}

}  // namespace pcnn
