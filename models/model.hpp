// A model built from a spec: its layers, one parameter arena (so one optimizer call updates every
// parameter), and the activation and gradient buffers between layers, sized for max_batch. With a
// 16-bit precision (core/precision.hpp) those buffers hold bf16 or fp16 values; parameters,
// their gradients, the logits the loss reads and their gradient stay fp32.
#pragma once

#include <memory>
#include <vector>

#include "backends/device_array.hpp"
#include "layers/layer.hpp"
#include "layers/softmax_cross_entropy.hpp"
#include "models/model_spec.hpp"

namespace pcnn {

class Model {
 public:
  // Builds the (fused, unless fuse_layers is false) model; parameters drawn from seed.
  Model(Backend& be, const ModelSpec& spec, int max_batch, uint64_t seed, bool fuse_layers = true,
        Precision precision = Precision::F32);

  const ModelSpec& spec() const { return spec_; }  // as built (fused)
  int max_batch() const { return max_batch_; }
  FeatureShape input_shape() const { return {spec_.in_c, spec_.in_h, spec_.in_w}; }
  int classes() const { return spec_.classes; }
  const SoftmaxCrossEntropy& loss() const { return loss_; }
  Precision precision() const { return precision_; }

  // x (N, in) -> logits(); x must stay valid until backward. Inference unless pass says training.
  // A 16-bit model's training forward leaves its logits in 16 bits: logits() holds them after
  // loss_and_gradient.
  void forward(int N, const float* x, const PassContext& pass = {});
  // The loss of the last forward's logits against labels, added to metrics (as
  // SoftmaxCrossEntropy does), and its gradient where backward_layers starts. loss_scale (device
  // memory, or nullptr for 1): what a 16-bit model multiplies the gradient by as it stores it in
  // 16 bits, so the parameter gradients come out scaled by it (fp16's loss scale; ignored in
  // fp32). A 16-bit model's loss reads its 16-bit logits (softmax_cross_entropy_16: one launch
  // on a backend that fuses it, instead of widen, loss and round).
  void loss_and_gradient(int N, const int32_t* labels, float* metrics,
                         const float* loss_scale = nullptr);
  // From the gradient loss_and_gradient left back to every parameter gradient (overwritten).
  void backward_layers(int N);
  // From dlogits() back to every parameter gradient (overwritten): a 16-bit model first stores
  // dlogits in 16 bits, times loss_scale as above; then backward_layers.
  void backward(int N, const float* loss_scale = nullptr);
  // One layer at a time, for the bench's per-layer breakdown (forward(i) after forward(i-1)).
  void forward_layer(size_t i, int N, const float* x, const PassContext& pass = {});
  void backward_layer(size_t i, int N);

  // fp32 whatever the precision: what an outside loss reads and writes (backward starts from
  // dlogits()). A 16-bit model widens its logits at the end of an inference forward, or in
  // loss_and_gradient after a training one.
  float* logits() const { return is16() ? logits32_.get() : static_cast<float*>(out_.back()); }
  float* dlogits() const {
    return is16() ? dlogits32_.get() : static_cast<float*>(grad_out_.back());
  }

  size_t param_count() const { return params_.size(); }
  float* params() const { return params_.get(); }
  float* grads() const { return grads_.get(); }
  std::vector<float> get_params() const { return params_.download(); }
  void set_params(const std::vector<float>& host);
  // Non-trained state (batchnorm running statistics), in layer order; the training forward
  // updates it, the optimizer never does. Empty for most models.
  size_t state_count() const { return state_.size(); }
  float* state() const { return state_.get(); }
  std::vector<float> get_state() const { return state_.download(); }
  void set_state(const std::vector<float>& host);

  size_t layer_count() const { return layers_.size(); }
  const Layer& layer(size_t i) const { return *layers_[i]; }
  double forward_flops(int N) const;
  double backward_flops(int N) const;

 private:
  bool is16() const { return precision_ != Precision::F32; }
  void allocate(const std::vector<float>& host_params, const std::vector<float>& host_state);
  size_t device_bytes(size_t param_count) const;  // what allocate() asks the backend for
  std::string memory_message(size_t param_count, const std::string& cause) const;

  Backend& be_;
  ModelSpec spec_;
  int max_batch_;
  Precision precision_;
  std::vector<std::unique_ptr<Layer>> layers_;
  SoftmaxCrossEntropy loss_;
  DeviceArray<float> params_, grads_;
  DeviceArray<float> state_;                  // non-trained state (Layer::state_count)
  std::vector<DeviceArray<uint8_t>> buffers_;  // layer outputs, in the storage precision
  DeviceArray<uint8_t> grad_buffers_[2];       // output gradients, used in turn going back
  DeviceArray<float> workspace_;               // Layer::bind_workspace
  std::vector<void*> out_, grad_out_;          // per layer (views alias their input)
  const void* input_ = nullptr;
  // 16-bit models only: the input rounded (unless the first layer reads it as given:
  // first_reads_fp32), the logits widened and their gradient, and the layers' staging floats
  // (Layer::bind_staging).
  bool input_fp32_ = false;
  DeviceArray<uint16_t> input16_;
  DeviceArray<float> logits32_, dlogits32_, staging_;
};

// Initial parameters of a spec (host), as Model draws them: the same for fused and unfused.
std::vector<float> initial_params(const ModelSpec& spec, uint64_t seed);

// Initial non-trained state of a spec (host): batchnorm running means 0, variances 1.
std::vector<float> initial_state(const ModelSpec& spec);

// The layers of a spec as Model builds them (pass fuse(spec) for the fused ones), checked
// (check_spec), without parameters or buffers: for describing a model without a backend.
std::vector<std::unique_ptr<Layer>> build_layers(const ModelSpec& spec);

// The activation bytes a training model needs per sample, by kind.
struct ActivationBytes {
  size_t outputs = 0;    // every non-view layer's output (the next layer's input)
  size_t kept = 0;       // what the layers keep themselves (Layer::kept_bytes_per_sample)
  size_t gradients = 0;  // two output-gradient buffers used in turn, each of the largest output
  size_t workspace = 0;  // one transient workspace every layer shares: the largest need
  // 16-bit models: the rounded input (none where the first layer reads the fp32 input as
  // given: first_reads_fp32), fp32 logits and their gradient (the loss's staging), and the
  // staging floats of the layer with the largest need (transient, like the workspace)
  size_t conversion = 0;
  size_t staging_floats = 0;  // that largest need, in floats (Model::allocate sizes it so)
  size_t total() const { return outputs + kept + gradients + workspace + conversion; }
};
// outputs and gradients in the precision's storage bytes (core/precision.hpp).
// `staging`: which 16-bit ops the backend runs on the caller's staging (Backend::stages_16bit);
// the default, every op, is what the composed defaults need.
ActivationBytes activation_bytes(const std::vector<std::unique_ptr<Layer>>& layers,
                                 Precision precision = Precision::F32,
                                 const Staging16& staging = {});

// Whether a 16-bit model of these layers feeds its fp32 input to the first layer as given
// (Layer::reads_fp32_input16), with no rounded copy of it.
bool first_reads_fp32(const std::vector<std::unique_ptr<Layer>>& layers);

// One layer's own share of that: its output and what it keeps (not the shared buffers).
size_t layer_activation_bytes(const Layer& layer, Precision precision = Precision::F32);

// The activation bytes one image keeps for backward in the whole model: of the fused layers as
// Model builds them, or (fused = false) of the spec's layers one by one, for the comparison.
size_t activation_bytes_per_image(const ModelSpec& spec, bool fused = true,
                                  Precision precision = Precision::F32,
                                  const Staging16& staging = {});

}  // namespace pcnn
