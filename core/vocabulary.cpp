// Names, descriptions and parsers generated from the tables in vocabulary.hpp.
#include "core/vocabulary.hpp"

#include "core/check.hpp"

namespace pcnn {

namespace {
struct Row {
  const char* name;
  const char* description;
};

#define PCNN_NAME_ROW(e, name, desc, ...) {name, desc},
constexpr Row kActivations[] = {PCNN_ACTIVATIONS(PCNN_NAME_ROW)};
#define PCNN_INIT_ROW(e, name, desc, init, ...) InitKind::init,
constexpr InitKind kActivationInits[] = {PCNN_ACTIVATIONS(PCNN_INIT_ROW)};
#undef PCNN_INIT_ROW
constexpr Row kPools[] = {PCNN_POOL_KINDS(PCNN_NAME_ROW)};
constexpr Row kLayerKinds[] = {PCNN_LAYER_KINDS(PCNN_NAME_ROW)};
#undef PCNN_NAME_ROW

template <class E, size_t N>
E parse_row(const Row (&rows)[N], const std::string& s, const char* what) {
  std::string known;
  for (size_t i = 0; i < N; ++i) {
    if (s == rows[i].name) return E(i);
    known += (known.empty() ? "" : ", ") + std::string(rows[i].name);
  }
  throw Error("unknown " + std::string(what) + " '" + s + "' (" + known + ")");
}
}  // namespace

const char* activation_name(Activation a) { return kActivations[int(a)].name; }
const char* activation_description(Activation a) { return kActivations[int(a)].description; }
InitKind preferred_init(Activation a) { return kActivationInits[int(a)]; }
const char* pool_name(PoolKind p) { return kPools[int(p)].name; }
const char* pool_description(PoolKind p) { return kPools[int(p)].description; }
const char* layer_kind_description(LayerKind k) { return kLayerKinds[int(k)].description; }

std::string layer_type_name(const LayerType& t) {
  switch (t.kind) {
    case LayerKind::Pool: return pool_name(t.pool);
    case LayerKind::Act: return activation_name(t.act);
    default: return kLayerKinds[int(t.kind)].name;
  }
}

std::vector<Activation> all_activations() {
  std::vector<Activation> all;
  for (size_t i = 0; i < std::size(kActivations); ++i) all.push_back(Activation(i));
  return all;
}

std::vector<PoolKind> all_pool_kinds() {
  std::vector<PoolKind> all;
  for (size_t i = 0; i < std::size(kPools); ++i) all.push_back(PoolKind(i));
  return all;
}

// Every layer type a spec can name: the layer kinds, except pooling and activation, which are
// named by their own tables (one type per pooling kind and per activation).
std::vector<LayerType> all_layer_types() {
  std::vector<LayerType> all;
  for (size_t i = 0; i < std::size(kLayerKinds); ++i) {
    const LayerKind k = LayerKind(i);
    if (k != LayerKind::Pool && k != LayerKind::Act)
      all.push_back({k, Activation::None, PoolKind::None});
  }
  for (PoolKind p : all_pool_kinds())
    if (p != PoolKind::None) all.push_back({LayerKind::Pool, Activation::None, p});
  for (Activation a : all_activations())
    if (a != Activation::None) all.push_back({LayerKind::Act, a, PoolKind::None});
  return all;
}

std::vector<std::string> layer_type_names() {
  std::vector<std::string> names;
  for (const LayerType& t : all_layer_types()) names.push_back(layer_type_name(t));
  return names;
}

Activation parse_activation(const std::string& s) {
  return s.empty() ? Activation::None : parse_row<Activation>(kActivations, s, "activation");
}

PoolKind parse_pool(const std::string& s) { return parse_row<PoolKind>(kPools, s, "pooling"); }

std::optional<LayerType> find_layer_type(const std::string& s) {
  for (const LayerType& t : all_layer_types())
    if (s == layer_type_name(t)) return t;
  return std::nullopt;
}

LayerType parse_layer_type(const std::string& s) {
  if (auto t = find_layer_type(s)) return *t;
  std::string known;
  for (const auto& n : layer_type_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error("unknown layer type '" + s + "' (" + known + ")");
}

}  // namespace pcnn
