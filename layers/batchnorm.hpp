// BatchNorm2D: per-channel batch normalisation of (N,C,H,W) after a convolution, or of (N,C)
// (H = W = 1) after a dense or flatten layer. Parameters gamma (C, the "weight", starts at 1) then
// beta (C, the "bias", starts at 0) in the model's parameter arena; running mean (starts at 0)
// then running variance (starts at 1) in its state arena. A training pass normalises with the
// batch's statistics and moves the running ones; an inference pass uses the running ones. A fused
// activation (the model builder folds a following activation layer in) is applied to the output,
// and the backward takes the gradient through it from that output.
#pragma once

#include "backends/device_array.hpp"
#include "layers/layer.hpp"

namespace pcnn {

class BatchNorm2D : public Layer {
 public:
  BatchNorm2D(FeatureShape in, float eps, float momentum, Activation act = Activation::None);
  std::string describe() const override;

  size_t param_count() const override { return 2 * size_t(in_.c); }
  size_t weight_param_count() const override { return size_t(in_.c); }
  void bind(float* params, float* grads) override;
  void init_params(Rng& rng, float* host) const override;
  size_t state_count() const override { return 2 * size_t(in_.c); }
  void bind_state(float* state) override;
  void init_state(float* host) const override;
  void setup(Backend& be, int max_batch) override;

  void forward(Backend& be, int N, const float* x, float* y) override;
  // Follows a training forward: the gradient through the batch statistics it saved.
  void backward(Backend& be, int N, const float* x, const float* y, const float* dy,
                float* dx) override;
  // Per element: 1 add for the mean, 3 for the variance, 4 to normalise, scale and shift (a fused
  // activation not counted, as conv and dense do not count theirs).
  double forward_flops(int N) const override { return 8.0 * N * in_.size(); }

 private:
  int hw() const { return in_.h * in_.w; }
  float eps_, momentum_;
  Activation act_;
  const float *gamma_ = nullptr, *beta_ = nullptr;
  float *dgamma_ = nullptr, *dbeta_ = nullptr;
  float *running_mean_ = nullptr, *running_var_ = nullptr;
  DeviceArray<float> save_mean_, save_inv_std_;  // the training forward's batch statistics (C)
};

}  // namespace pcnn
