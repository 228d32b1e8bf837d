// SGD (momentum, weight decay) or Adam over the model's whole parameter arena: state and
// hyper-parameters in device memory, one backend call per step.
#pragma once

#include <string>

#include "backends/device_array.hpp"
#include "models/model.hpp"

namespace pcnn {

struct OptimizerConfig {
  std::string kind = "sgd";  // sgd | adam
  float lr = 0.05f;
  float momentum = 0.9f;
  float weight_decay = 0.f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
};

class Optimizer {
 public:
  Optimizer(Backend& be, const Model& model, const OptimizerConfig& cfg);
  // Writes the learning rate to the device; between steps only.
  void set_learning_rate(float lr);
  // The loss scale (core/precision.hpp; 1 and static unless set): what the model multiplies the
  // loss gradient by, and the update divides by; dynamic: check_step moves it. Between steps.
  void set_loss_scale(float scale, bool dynamic);
  // {scale, finite steps since it last moved}, for checkpoints (waits for the device).
  std::vector<float> loss_scale_state() const;
  void set_loss_scale_state(const std::vector<float>& s);
  // One update of every parameter from its gradient; step is the device-side step counter.
  void step(const int32_t* step_counter);
  const OptimizerConfig& config() const { return cfg_; }
  // The hyper-parameters in device memory; check_step writes their kHyperSkip.
  float* hyper() const { return hyper_.get(); }
  // The per-parameter state, for checkpoints: SGD's velocity, or Adam's first moment (m) and
  // second moment (v; empty for SGD). Adam's step count is the trainer's step counter.
  std::vector<float> moment1() const { return state1_.download(); }
  std::vector<float> moment2() const;
  // Replaces that state (sizes checked). Synchronise before the vectors go.
  void set_moments(const std::vector<float>& m1, const std::vector<float>& m2);

 private:
  Backend& be_;
  const Model& model_;
  OptimizerConfig cfg_;
  DeviceArray<float> hyper_, state1_, state2_;
  std::vector<float> host_hyper_;  // kept alive while an asynchronous upload reads it
};

}  // namespace pcnn
