// Optimizer: allocates its state next to the arena and forwards to the backend's update kernel.
#include "train/optimizer.hpp"

#include "core/check.hpp"
#include "core/precision.hpp"

namespace pcnn {

Optimizer::Optimizer(Backend& be, const Model& model, const OptimizerConfig& cfg)
    : be_(be), model_(model), cfg_(cfg), host_hyper_(kHyperCount, 0.f) {
  PCNN_CHECK(cfg.kind == "sgd" || cfg.kind == "adam",
             "unknown optimizer '" << cfg.kind << "' (sgd, adam)");
  PCNN_CHECK(cfg.lr > 0.f, "learning rate must be positive");
  PCNN_CHECK(cfg.momentum >= 0.f && cfg.momentum < 1.f, "momentum must be in [0, 1)");
  const size_t n = model.param_count();
  hyper_ = DeviceArray<float>(be, kHyperCount);
  state1_ = DeviceArray<float>(be, n);
  be.fill(state1_.get(), 0.f, n);
  if (cfg.kind == "adam") {
    state2_ = DeviceArray<float>(be, n);
    be.fill(state2_.get(), 0.f, n);
  }
  host_hyper_[kHyperLr] = cfg.lr;
  host_hyper_[kHyperMomentum] = cfg.momentum;
  host_hyper_[kHyperWeightDecay] = cfg.weight_decay;
  host_hyper_[kHyperBeta1] = cfg.beta1;
  host_hyper_[kHyperBeta2] = cfg.beta2;
  host_hyper_[kHyperEps] = cfg.eps;
  host_hyper_[kHyperLossScale] = 1.f;  // no loss scale unless set_loss_scale says otherwise
  host_hyper_[kHyperGradUnscale] = 1.f;
  hyper_.upload(host_hyper_);
}

// One slot: the loss scale's slots move on the device and must not be reset between epochs.
void Optimizer::set_learning_rate(float lr) {
  host_hyper_[kHyperLr] = lr;
  be_.upload(hyper_.get() + kHyperLr, &host_hyper_[kHyperLr], sizeof(float));
}

void Optimizer::set_loss_scale(float scale, bool dynamic) {
  PCNN_CHECK(scale >= kMinLossScale && scale <= kMaxLossScale,
             "loss scale " << scale << " is outside [" << kMinLossScale << ", " << kMaxLossScale
                           << "]");
  host_hyper_[kHyperLossScale] = scale;
  host_hyper_[kHyperGradUnscale] = 1.f / scale;
  host_hyper_[kHyperScaleGoodSteps] = 0.f;
  host_hyper_[kHyperScaleInterval] = dynamic ? kLossScaleInterval : 0.f;
  hyper_.upload(host_hyper_);
}

std::vector<float> Optimizer::loss_scale_state() const {
  const std::vector<float> h = hyper_.download();
  return {h[kHyperLossScale], h[kHyperScaleGoodSteps]};
}

void Optimizer::set_loss_scale_state(const std::vector<float>& s) {
  PCNN_CHECK(s.size() == 2 && s[0] >= kMinLossScale && s[0] <= kMaxLossScale && s[1] >= 0.f,
             "a bad loss scale state");
  host_hyper_[kHyperLossScale] = s[0];
  host_hyper_[kHyperGradUnscale] = 1.f / s[0];
  host_hyper_[kHyperScaleGoodSteps] = s[1];
  hyper_.upload(host_hyper_);
}

std::vector<float> Optimizer::moment2() const {
  return state2_.get() ? state2_.download() : std::vector<float>();
}

void Optimizer::set_moments(const std::vector<float>& m1, const std::vector<float>& m2) {
  const size_t n = model_.param_count();
  const size_t n2 = state2_.get() ? n : 0;
  PCNN_CHECK(m1.size() == n && m2.size() == n2,
             cfg_.kind << " needs " << n << " + " << n2 << " state values, got " << m1.size()
                       << " + " << m2.size());
  state1_.upload(m1);
  if (n2) state2_.upload(m2);
}

void Optimizer::step(const int32_t* step_counter) {
  const size_t n = model_.param_count();
  if (cfg_.kind == "adam")
    be_.adam_update(n, model_.params(), model_.grads(), state1_.get(), state2_.get(),
                    hyper_.get(), step_counter);
  else
    be_.sgd_update(n, model_.params(), model_.grads(), state1_.get(), hyper_.get());
}

}  // namespace pcnn
