// Optimizer: allocates its state next to the arena and forwards to the backend's update kernel.
#include "train/optimizer.hpp"

#include "core/check.hpp"

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
  set_learning_rate(cfg.lr);
}

void Optimizer::set_learning_rate(float lr) {
  host_hyper_ = std::vector<float>(kHyperCount, 0.f);
  host_hyper_[kHyperLr] = lr;
  host_hyper_[kHyperMomentum] = cfg_.momentum;
  host_hyper_[kHyperWeightDecay] = cfg_.weight_decay;
  host_hyper_[kHyperBeta1] = cfg_.beta1;
  host_hyper_[kHyperBeta2] = cfg_.beta2;
  host_hyper_[kHyperEps] = cfg_.eps;
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
