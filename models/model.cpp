// Building a model from its spec, and running its layers forward and backward.
#include "models/model.hpp"

#include <algorithm>
#include <new>
#include <sstream>

#include "core/check.hpp"
#include "core/checked_math.hpp"
#include "core/vocabulary.hpp"
#include "layers/activation.hpp"
#include "layers/batchnorm.hpp"
#include "layers/conv2d.hpp"
#include "layers/dense.hpp"
#include "layers/dropout.hpp"
#include "layers/global_avg_pool.hpp"
#include "layers/pool2d.hpp"
#include "models/spec_check.hpp"

namespace pcnn {

namespace {
// The type of layer i, with the layer's index in the error when the word is unknown.
LayerType type_of(const ModelSpec& spec, size_t i) {
  try {
    return parse_layer_type(spec.layers[i].type);
  } catch (const Error& e) {
    throw Error("layer " + std::to_string(i) + ": " + e.what());
  }
}

// The activation applied right after layer i: its fused one, or the next layer's (looking past
// batch normalisation, which rescales each channel before the activation sees it).
Activation activation_after(const ModelSpec& spec, size_t i) {
  const LayerSpec& l = spec.layers[i];
  if (l.act != "none") return parse_activation(l.act);
  for (size_t j = i + 1; j < spec.layers.size(); ++j) {
    const LayerType next = type_of(spec, j);
    if (next.kind == LayerKind::Act) return next.act;
    if (next.kind != LayerKind::BatchNorm) break;
    if (spec.layers[j].act != "none") return parse_activation(spec.layers[j].act);  // fused
  }
  return Activation::None;
}

// Which dropout layer of the spec layer i is (0, 1, ...): its salt, the same whether the spec
// was fused or not (fusion never moves a dropout past another).
uint32_t dropout_ordinal(const ModelSpec& spec, size_t i) {
  uint32_t n = 0;
  for (size_t k = 0; k < i; ++k) n += type_of(spec, k).kind == LayerKind::Dropout;
  return n;
}

std::unique_ptr<Layer> make_layer(const ModelSpec& spec, size_t i, FeatureShape in) {
  const LayerSpec& l = spec.layers[i];
  const LayerType type = type_of(spec, i);
  const InitKind init = preferred_init(activation_after(spec, i));
  switch (type.kind) {
    case LayerKind::Conv: {
      PCNN_CHECK(l.units > 0 && l.kernel > 0 && l.stride > 0 && l.pad >= 0,
                 "layer " << i << ": conv needs units, kernel, stride > 0 and pad >= 0");
      Conv2dParams p;
      p.maps = l.units; p.kernel = l.kernel; p.stride = l.stride; p.pad = l.pad; p.init = init;
      p.epilogue.act = parse_activation(l.act);
      p.epilogue.pool = parse_pool(l.pool);
      p.epilogue.pool_window = l.pool_window;
      p.epilogue.pool_stride = l.pool_stride;
      return std::make_unique<Conv2D>(in, p);
    }
    case LayerKind::Dense:
      PCNN_CHECK(l.units > 0, "layer " << i << ": dense needs units > 0");
      return std::make_unique<Dense>(in, l.units, parse_activation(l.act), init);
    case LayerKind::Pool:
      PCNN_CHECK(l.kernel > 0 && l.stride > 0,
                 "layer " << i << ": pool needs kernel and stride > 0");
      return std::make_unique<Pool2D>(in, type.pool, l.kernel, l.stride, l.pad);
    case LayerKind::Act:
      return std::make_unique<ActivationLayer>(in, type.act);
    case LayerKind::Flatten:
      return std::make_unique<Flatten>(in);
    case LayerKind::BatchNorm:
      return std::make_unique<BatchNorm2D>(in, l.eps, l.momentum, parse_activation(l.act));
    case LayerKind::Dropout:
      return std::make_unique<Dropout>(in, float(l.rate), dropout_ordinal(spec, i));
    case LayerKind::GlobalAvgPool:
      return std::make_unique<GlobalAvgPool>(in);
  }
  throw Error("layer " + std::to_string(i) + ": unknown layer type '" + l.type + "'");
}

}  // namespace

std::vector<std::unique_ptr<Layer>> build_layers(const ModelSpec& spec) {
  check_spec(spec);  // every size below 2^31 and every window inside its input, named if not
  std::vector<std::unique_ptr<Layer>> layers;
  FeatureShape shape{spec.in_c, spec.in_h, spec.in_w};
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    layers.push_back(make_layer(spec, i, shape));
    shape = layers.back()->output_shape();
  }
  PCNN_CHECK(shape.size() == size_t(spec.classes),
             "model '" << spec.name << "' ends in " << shape.size() << " outputs, expected "
                       << spec.classes << " logits");
  return layers;
}

bool first_reads_fp32(const std::vector<std::unique_ptr<Layer>>& layers) {
  return !layers.empty() && !layers.front()->is_view() && layers.front()->reads_fp32_input16();
}

size_t layer_activation_bytes(const Layer& layer, Precision precision) {
  return (layer.is_view() ? 0 : layer.output_shape().size() * storage_bytes(precision)) +
         layer.kept_bytes_per_sample();
}

ActivationBytes activation_bytes(const std::vector<std::unique_ptr<Layer>>& layers,
                                 Precision precision, const Staging16& staging) {
  const size_t bytes = storage_bytes(precision);
  ActivationBytes b;
  size_t largest_output = 0, largest_workspace = 0, largest_staging = 0;
  for (const auto& l : layers) {
    b.kept += l->kept_bytes_per_sample();
    largest_workspace = std::max(largest_workspace, l->workspace_floats_per_sample());
    largest_staging = std::max(largest_staging, l->staging_floats_per_sample(staging));
    if (l->is_view()) continue;
    b.outputs += l->output_shape().size() * bytes;
    largest_output = std::max(largest_output, l->output_shape().size());
  }
  b.gradients = 2 * largest_output * bytes;
  b.staging_floats = largest_staging;
  b.workspace = largest_workspace * sizeof(float);
  if (precision != Precision::F32 && !layers.empty()) {
    const size_t logits = layers.back()->output_shape().size();
    const size_t input = first_reads_fp32(layers) ? 0 : layers.front()->input_shape().size();
    b.conversion = input * bytes + (2 * logits + largest_staging) * sizeof(float);
  }
  return b;
}

size_t activation_bytes_per_image(const ModelSpec& spec, bool fused, Precision precision,
                                  const Staging16& staging) {
  return activation_bytes(build_layers(fused ? fuse(spec) : spec), precision, staging).total();
}

std::vector<float> initial_params(const ModelSpec& spec, uint64_t seed) {
  // Each parameterised layer draws from its own stream (seed, ordinal), so fusing activations
  // and pools into other layers changes nothing.
  const auto layers = build_layers(spec);
  std::vector<float> host;
  uint64_t ordinal = 0;
  for (const auto& l : layers) {
    if (!l->param_count()) continue;
    Rng rng(seed * 1000003ull + ordinal++);
    const size_t at = host.size();
    host.resize(at + l->param_count());
    l->init_params(rng, host.data() + at);
  }
  return host;
}

std::vector<float> initial_state(const ModelSpec& spec) {
  std::vector<float> host;
  for (const auto& l : build_layers(spec)) {
    const size_t at = host.size();
    host.resize(at + l->state_count());
    l->init_state(host.data() + at);
  }
  return host;
}

Model::Model(Backend& be, const ModelSpec& spec, int max_batch, uint64_t seed, bool fuse_layers,
             Precision precision)
    : be_(be), spec_(fuse_layers ? fuse(spec) : spec), max_batch_(max_batch),
      precision_(precision), loss_(spec.classes) {
  PCNN_CHECK(max_batch >= 1, "batch size must be at least 1");
  // Backends index a batch's activations with int: the largest buffer must stay below 2^31.
  const int64_t largest = check_spec(spec_).largest;
  PCNN_CHECK(checked_product({max_batch, largest}).value_or(UINT64_MAX) <= kMaxElements,
             "a batch of " << max_batch << " needs " << largest
                           << " floats per image in one layer, more than " << kMaxElements
                           << " in all: use a smaller batch");
  layers_ = build_layers(spec_);
  const std::vector<float> host = initial_params(spec, seed);
  try {
    allocate(host, initial_state(spec));
  } catch (const std::bad_alloc&) {
    throw OutOfMemory(memory_message(host.size(), "out of host memory"), 0);
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(memory_message(host.size(), e.what()), e.bytes());
  }
}

// The parameters, their gradients, the state, and the activations of max_batch images
// (activation_bytes).
size_t Model::device_bytes(size_t param_count) const {
  size_t floats = 2 * param_count;
  for (const auto& l : layers_) floats += l->state_count();
  return floats * sizeof(float) +
         size_t(max_batch_) * activation_bytes(layers_, precision_, be_.stages_16bit()).total();
}

std::string Model::memory_message(size_t param_count, const std::string& cause) const {
  std::ostringstream os;
  os << "model '" << spec_.name << "' at batch " << max_batch_ << " needs about "
     << (device_bytes(param_count) + (1 << 20) - 1) / (1 << 20) << " MiB on " << be_.name()
     << " (" << cause << "): use a smaller --batch-size";
  return os.str();
}

void Model::allocate(const std::vector<float>& host, const std::vector<float>& host_state) {
  params_ = DeviceArray<float>(be_, host);
  grads_ = DeviceArray<float>(be_, host.size());
  be_.fill(grads_.get(), 0.f, host.size());
  state_ = DeviceArray<float>(be_, host_state);
  size_t offset = 0, state_offset = 0;
  for (auto& l : layers_) {
    l->bind(params_.get() + offset, grads_.get() + offset);
    offset += l->param_count();
    l->bind_state(state_.get() + state_offset);
    state_offset += l->state_count();
    l->setup(be_, max_batch_);
  }
  const size_t batch = size_t(max_batch_), bytes = storage_bytes(precision_);
  const Staging16 staged = be_.stages_16bit();
  const ActivationBytes per_sample = activation_bytes(layers_, precision_, staged);
  for (auto& g : grad_buffers_) g = DeviceArray<uint8_t>(be_, batch * per_sample.gradients / 2);
  if (per_sample.workspace) {
    workspace_ = DeviceArray<float>(be_, batch * per_sample.workspace / sizeof(float));
    for (auto& l : layers_) l->bind_workspace(workspace_.get());
  }
  if (is16()) {
    if (per_sample.staging_floats)
      staging_ = DeviceArray<float>(be_, batch * per_sample.staging_floats);
    for (auto& l : layers_) l->bind_staging(staging_.get());
    input_fp32_ = first_reads_fp32(layers_);
    if (!input_fp32_)
      input16_ = DeviceArray<uint16_t>(be_, batch * layers_.front()->input_shape().size());
    logits32_ = DeviceArray<float>(be_, batch * size_t(spec_.classes));
    dlogits32_ = DeviceArray<float>(be_, batch * size_t(spec_.classes));
  }
  out_.resize(layers_.size());
  grad_out_.resize(layers_.size());
  // Going back, layer i reads the gradient of its output and writes that of its input, which
  // is the output of the layer before: consecutive (non-view) layers take the two buffers in
  // turn, so a gradient lives only until the layer before has used it.
  size_t turn = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i]->is_view()) continue;  // resolved in forward(): aliases its input
    buffers_.emplace_back(be_, batch * layers_[i]->output_shape().size() * bytes);
    out_[i] = buffers_.back().get();
    grad_out_[i] = grad_buffers_[turn++ % 2].get();
  }
}

void Model::set_params(const std::vector<float>& host) {
  PCNN_CHECK(host.size() == params_.size(), "model '" << spec_.name << "' has "
                                                      << params_.size() << " parameters, got "
                                                      << host.size());
  params_.upload(host);
}

void Model::set_state(const std::vector<float>& host) {
  PCNN_CHECK(host.size() == state_.size(), "model '" << spec_.name << "' has " << state_.size()
                                                     << " state values, got " << host.size());
  state_.upload(host);
}

void Model::forward_layer(size_t i, int N, const float* x, const PassContext& pass) {
  if (i == 0) {
    input_ = x;
    if (is16() && !input_fp32_) {  // the input is stored like every other activation
      be_.round_to_16bit(precision_, size_t(N) * layers_[0]->input_shape().size(), x, nullptr,
                         input16_.get());
      input_ = input16_.get();
    }
  }
  const void* in = i == 0 ? input_ : out_[i - 1];
  Layer& l = *layers_[i];
  if (l.is_view()) {
    out_[i] = const_cast<void*>(in);
    grad_out_[i] = i == 0 ? nullptr : grad_out_[i - 1];
  } else {
    l.set_pass(pass);
    if (i == 0 && input_fp32_)
      l.forward16_fp32_input(be_, N, precision_, static_cast<const float*>(in),
                             static_cast<uint16_t*>(out_[i]));
    else if (is16())
      l.forward16(be_, N, precision_, static_cast<const uint16_t*>(in),
                  static_cast<uint16_t*>(out_[i]));
    else
      l.forward(be_, N, static_cast<const float*>(in), static_cast<float*>(out_[i]));
  }
  // An outside loss reads fp32 logits; training's loss_and_gradient widens them itself.
  if (is16() && i + 1 == layers_.size() && !pass.training)
    be_.widen_16bit(precision_, size_t(N) * size_t(spec_.classes),
                    static_cast<const uint16_t*>(out_[i]), logits32_.get());
}

void Model::backward_layer(size_t i, int N) {
  Layer& l = *layers_[i];
  if (l.is_view()) return;
  const void* in = i == 0 ? input_ : out_[i - 1];
  void* dx = i == 0 ? nullptr : grad_out_[i - 1];
  if (i == 0 && input_fp32_)
    l.backward16_fp32_input(be_, N, precision_, static_cast<const float*>(in),
                            static_cast<const uint16_t*>(out_[i]),
                            static_cast<const uint16_t*>(grad_out_[i]));
  else if (is16())
    l.backward16(be_, N, precision_, static_cast<const uint16_t*>(in),
                 static_cast<const uint16_t*>(out_[i]),
                 static_cast<const uint16_t*>(grad_out_[i]), static_cast<uint16_t*>(dx));
  else
    l.backward(be_, N, static_cast<const float*>(in), static_cast<const float*>(out_[i]),
               static_cast<const float*>(grad_out_[i]), static_cast<float*>(dx));
}

void Model::forward(int N, const float* x, const PassContext& pass) {
  PCNN_CHECK(N >= 1 && N <= max_batch_, "batch of " << N << " exceeds the model's maximum of "
                                                    << max_batch_);
  for (size_t i = 0; i < layers_.size(); ++i) forward_layer(i, N, x, pass);
}

void Model::loss_and_gradient(int N, const int32_t* labels, float* metrics,
                              const float* loss_scale) {
  if (!is16()) {
    loss_.forward_backward(be_, N, static_cast<const float*>(out_.back()), labels,
                           static_cast<float*>(grad_out_.back()), metrics);
    return;
  }
  // dlogits32_ is the default's staging (N K floats, as logits32_ is given); logits() ends up
  // widened as after an inference forward.
  be_.softmax_cross_entropy_16(precision_, N, spec_.classes,
                               static_cast<const uint16_t*>(out_.back()), labels, loss_scale,
                               dlogits32_.get(), logits32_.get(),
                               static_cast<uint16_t*>(grad_out_.back()), metrics);
}

void Model::backward_layers(int N) {
  for (size_t i = layers_.size(); i-- > 0;) backward_layer(i, N);
}

void Model::backward(int N, const float* loss_scale) {
  if (is16())  // the loss wrote fp32 dlogits: stored in 16 bits, scaled on the way
    be_.round_to_16bit(precision_, size_t(N) * size_t(spec_.classes), dlogits32_.get(),
                       loss_scale, static_cast<uint16_t*>(grad_out_.back()));
  backward_layers(N);
}

double Model::forward_flops(int N) const {
  double f = 0;
  for (const auto& l : layers_) f += l->forward_flops(N);
  return f;
}

double Model::backward_flops(int N) const {
  double f = 0;
  for (const auto& l : layers_) f += l->backward_flops(N);
  return f;
}

}  // namespace pcnn
