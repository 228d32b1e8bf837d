// A layer: written once against the Backend contract, never against a backend's own code.
// The model owns the activations between layers, their gradients and one workspace all layers
// share; a layer owns only what it keeps between its forward and backward passes (e.g. a fused
// convolution's max-pooling indices).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "backends/backend.hpp"
#include "core/precision.hpp"
#include "core/rng.hpp"

namespace pcnn {

// Shape of one sample's features (the batch dimension is passed to every call).
struct FeatureShape {
  int c = 1, h = 1, w = 1;
  size_t size() const { return size_t(c) * h * w; }
};

// What a forward pass is for. Training: layers that behave differently in training (BatchNorm's
// batch statistics, Dropout's drops) do so; inference (the default) is deterministic. step is the
// training step's number in device memory (the data counter), so per-step randomness is drawn on
// the device from (seed, *step) and a captured graph draws anew at every replay.
struct PassContext {
  bool training = false;
  const int32_t* step = nullptr;  // device memory; set when training
  uint32_t seed = 0;
};

// Declares a layer's two passes (Layer::forward and Layer::backward), defined in its .cpp.
#define PCNN_LAYER_PASSES                                                                   \
  void forward(Backend& be, int N, const float* x, float* y) override;                      \
  void backward(Backend& be, int N, const float* x, const float* y, const float* dy,        \
                float* dx) override;

// Declares a layer's own 16-bit passes (Layer::forward16 and backward16): for the layers whose
// op has a 16-bit form in the contract, which a backend may run natively.
#define PCNN_LAYER_PASSES_16                                                                \
  void forward16(Backend& be, int N, Precision p, const uint16_t* x, uint16_t* y) override; \
  void backward16(Backend& be, int N, Precision p, const uint16_t* x, const uint16_t* y,    \
                  const uint16_t* dy, uint16_t* dx) override;

// The cost of a layer that does one operation per input element, forward and backward alike.
#define PCNN_PER_ELEMENT_FLOPS                                                              \
  double forward_flops(int N) const override { return double(N) * in_.size(); }            \
  double backward_flops(int N) const override { return forward_flops(N); }

class Layer {
 public:
  virtual ~Layer() = default;

  virtual std::string describe() const = 0;  // e.g. "conv 5x5 x6 pad 2 +relu +maxpool 2"
  FeatureShape input_shape() const { return in_; }
  FeatureShape output_shape() const { return out_; }

  virtual size_t param_count() const { return 0; }
  // How many of them come first as weights; the rest are biases (errors name which).
  virtual size_t weight_param_count() const { return param_count(); }
  // Pointers into the model's parameter and gradient arenas, param_count() floats each.
  virtual void bind(float* params, float* grads) { (void)params; (void)grads; }
  // Writes this layer's initial parameters (host memory, param_count() floats).
  virtual void init_params(Rng& rng, float* host) const { (void)rng; (void)host; }
  // Non-trained state (BatchNorm's running statistics): state_count() floats in the model's
  // state arena, which forward may update, the optimizer never touches, and model files and
  // checkpoints save beside the parameters.
  virtual size_t state_count() const { return 0; }
  virtual void bind_state(float* state) { (void)state; }
  // Writes this layer's initial state (host memory, state_count() floats).
  virtual void init_state(float* host) const { (void)host; }
  // Allocates what forward keeps for backward, for batches of up to max_batch samples.
  virtual void setup(Backend& be, int max_batch) { (void)be; (void)max_batch; }
  // The bytes setup() allocates per sample (besides the model's buffers for the output).
  virtual size_t kept_bytes_per_sample() const { return 0; }
  // Transient floats per sample a pass needs only while it runs (d(pre-activation), a pre-pool
  // output on its way to pooling): the model gives every layer the same workspace, sized for the
  // largest need, through bind_workspace.
  virtual size_t workspace_floats_per_sample() const { return 0; }
  void bind_workspace(float* workspace) { workspace_ = workspace; }
  // True when the output is the input, reinterpreted (Flatten): the model aliases the buffers.
  virtual bool is_view() const { return false; }
  // The pass the next forward (and the backward after it) belongs to; the model sets it.
  void set_pass(const PassContext& pass) { pass_ = pass; }

  // x (N, in) -> y (N, out); overwrites y.
  virtual void forward(Backend& be, int N, const float* x, float* y) = 0;
  // dy (N, out) -> parameter gradients (overwritten) and dx (N, in), skipped when nullptr.
  virtual void backward(Backend& be, int N, const float* x, const float* y, const float* dy,
                        float* dx) = 0;

  // The same passes on activations and gradients stored in 16 bits (core/precision.hpp; p is
  // BF16 or F16). The defaults (layers/storage16.cpp) widen the inputs into the staging floats
  // the model binds, run the fp32 pass and round its results: what a kernel that reads and
  // writes 16 bits and computes in fp32 gives. A layer whose op has a 16-bit form in the
  // contract overrides them.
  virtual void forward16(Backend& be, int N, Precision p, const uint16_t* x, uint16_t* y);
  virtual void backward16(Backend& be, int N, Precision p, const uint16_t* x, const uint16_t* y,
                          const uint16_t* dy, uint16_t* dx);
  // A 16-bit model's first layer may read the model's fp32 input as given (no rounding launch
  // before it; its kernels read fp32): a layer that can says so here and takes the two passes
  // below, which compute no dx (a first layer has none to give). The defaults are never called.
  virtual bool reads_fp32_input16() const { return false; }
  virtual void forward16_fp32_input(Backend& be, int N, Precision p, const float* x, uint16_t* y);
  virtual void backward16_fp32_input(Backend& be, int N, Precision p, const float* x,
                                     const uint16_t* y, const uint16_t* dy);
  // Floats per sample those defaults stage (x, y, dy and dx widened); 0 for a view, and for a
  // layer whose 16-bit op the backend runs without staging (`st`: Backend::stages_16bit).
  virtual size_t staging_floats_per_sample(const Staging16& st) const {
    (void)st;
    return is_view() ? 0 : 2 * (in_.size() + out_.size());
  }
  void bind_staging(float* staging) { staging_ = staging; }

  // Counted floating-point operations, for the bench's GFLOP/s.
  virtual double forward_flops(int N) const { (void)N; return 0; }
  virtual double backward_flops(int N) const { return 2 * forward_flops(N); }

 protected:
  FeatureShape in_, out_;
  PassContext pass_;
  float* workspace_ = nullptr;  // shared by every layer of the model: valid during one pass only
  float* staging_ = nullptr;    // the same, for the 16-bit passes' widened tensors
};

// Kaiming-normal or Xavier-uniform weights (core/vocabulary.hpp: preferred_init); biases start
// at zero.
void init_weights(Rng& rng, InitKind kind, int fan_in, int fan_out, float* w, size_t n);

// A layer with parameters: `units` rows of fan_in weights, then one bias per unit, in that order
// in the model's arenas (Conv2D: units = maps, fan_in = C*R*S; Dense: units = out, fan_in = in).
class WeightedLayer : public Layer {
 public:
  size_t param_count() const override { return weight_count() + size_t(units_); }
  size_t weight_param_count() const override { return weight_count(); }
  void bind(float* params, float* grads) override {
    w_ = params;
    b_ = params + weight_count();
    dw_ = grads;
    db_ = grads + weight_count();
  }
  void init_params(Rng& rng, float* host) const override {
    init_weights(rng, init_, fan_in_, fan_out_, host, weight_count());
    for (int k = 0; k < units_; ++k) host[weight_count() + k] = 0.f;
  }

 protected:
  WeightedLayer(int units, int fan_in, int fan_out, InitKind init)
      : units_(units), fan_in_(fan_in), fan_out_(fan_out), init_(init) {}
  int units() const { return units_; }
  size_t weight_count() const { return size_t(units_) * size_t(fan_in_); }

  float *w_ = nullptr, *b_ = nullptr, *dw_ = nullptr, *db_ = nullptr;

 private:
  int units_, fan_in_, fan_out_;  // fan_out: the initialisation's (Xavier's) output fan
  InitKind init_;
};

}  // namespace pcnn
