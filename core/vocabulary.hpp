// The words a model is written in: activations, pooling kinds and layer types, each listed once.
// One row names a thing (as written in model specs, JSON and on the command line), describes it,
// and, for activations, gives its formula and derivative. Parsers, printers, every backend's
// kernels (through dispatch_activation and core/activation_math.hpp) and the tests read these
// tables, so a new activation is one row here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/host_device.hpp"

// X(Enum, "name", "description", init, f(x), f'(x) written with the forward *output* y)
// The derivative takes y so that backward never needs the pre-activation. init: the weight
// initialisation of a layer this activation follows (Kaiming for rectifiers, He et al. 2015;
// Xavier for saturating functions, Glorot & Bengio 2010).
#define PCNN_ACTIVATIONS(X)                                                                  \
  X(None, "none", "identity", Xavier, (x), (1.f))                                            \
  X(ReLU, "relu", "max(x, 0)", Kaiming, (x > 0.f ? x : 0.f), (y > 0.f ? 1.f : 0.f))          \
  X(Tanh, "tanh", "hyperbolic tangent", Xavier, (tanhf(x)), (1.f - y * y))                   \
  X(Sigmoid, "sigmoid", "logistic 1 / (1 + e^-x)", Xavier, (1.f / (1.f + expf(-x))),         \
    (y * (1.f - y)))                                                                         \
  X(ELU, "elu", "x, or e^x - 1 below zero (Clevert et al. 2016)", Kaiming,                  \
    (x > 0.f ? x : expm1f(x)), (y > 0.f ? 1.f : y + 1.f))

// X(Enum, "name", "description")
#define PCNN_POOL_KINDS(X)                                                   \
  X(None, "none", "no pooling")                                              \
  X(Max, "maxpool", "maximum of each window (the first one in row-major order)") \
  X(Avg, "avgpool", "mean of each window")

// X(Enum, "name", "description"). Pooling and activation layers are named by their own tables.
#define PCNN_LAYER_KINDS(X)                                                                    \
  X(Conv, "conv", "2-D convolution: units (maps), kernel, stride, pad; act and pool may be fused") \
  X(Dense, "dense", "fully connected: units; act may be fused")                                \
  X(Pool, "pool", "pooling: kernel (window), stride (default: the window)")                   \
  X(Act, "act", "element-wise activation")                                                    \
  X(Flatten, "flatten", "(C,H,W) -> (C*H*W), no copy")                                       \
  X(BatchNorm, "batchnorm", "batch normalisation per channel: eps, momentum; running statistics kept") \
  X(Dropout, "dropout", "inverted dropout while training: rate (default 0.5); identity otherwise") \
  X(GlobalAvgPool, "globalavgpool", "(C,H,W) -> (C,1,1): the mean of each channel")

namespace pcnn {

#define PCNN_ENUM_ROW(e, ...) e,
enum class Activation { PCNN_ACTIVATIONS(PCNN_ENUM_ROW) };
enum class PoolKind { PCNN_POOL_KINDS(PCNN_ENUM_ROW) };
enum class LayerKind { PCNN_LAYER_KINDS(PCNN_ENUM_ROW) };
#undef PCNN_ENUM_ROW

// Weight initialisation: Kaiming-normal or Xavier-uniform (layers/layer.hpp draws them).
enum class InitKind { Kaiming, Xavier };

// A layer type as a spec names it: "conv", "dense", "flatten", a pooling name ("maxpool") or an
// activation name ("relu").
struct LayerType {
  LayerKind kind = LayerKind::Flatten;
  Activation act = Activation::None;  // kind == Act
  PoolKind pool = PoolKind::None;     // kind == Pool
};

const char* activation_name(Activation a);
const char* activation_description(Activation a);
InitKind preferred_init(Activation a);  // of the layer whose output the activation takes
const char* pool_name(PoolKind p);
const char* pool_description(PoolKind p);
const char* layer_kind_description(LayerKind k);
std::string layer_type_name(const LayerType& t);

// Every activation / pooling kind / layer type, in table order (None excluded where it is not a
// layer of its own).
std::vector<Activation> all_activations();
std::vector<PoolKind> all_pool_kinds();
std::vector<LayerType> all_layer_types();
std::vector<std::string> layer_type_names();

// Parsers: throw Error naming the word and listing the accepted ones.
Activation parse_activation(const std::string& s);  // "" means none
PoolKind parse_pool(const std::string& s);
LayerType parse_layer_type(const std::string& s);
std::optional<LayerType> find_layer_type(const std::string& s);  // nullopt when unknown

// The one switch from a run-time activation to a compile-time one: f(ActTag<A>{}) with A = act.
// Kernels templated on the tag let the compiler fold the formula into the loop. Device code calls
// it too (once per thread, ahead of an unrolled register tile), hence PCNN_HD; the pragma keeps
// nvcc quiet about host-only lambdas, which are only ever instantiated on the host.
template <Activation A>
struct ActTag {
  static constexpr Activation value = A;
};

#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class F>
PCNN_HD decltype(auto) dispatch_activation(Activation act, F&& f) {
  switch (act) {
#define PCNN_DISPATCH_ROW(e, ...) \
  case Activation::e: return f(ActTag<Activation::e>{});
    PCNN_ACTIVATIONS(PCNN_DISPATCH_ROW)
#undef PCNN_DISPATCH_ROW
  }
  return f(ActTag<Activation::None>{});
}

}  // namespace pcnn
