// Built-in model specs, the fusion pass, and loading a spec by name or file.
#include "models/model_spec.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "core/vocabulary.hpp"

namespace pcnn {

namespace {
LayerSpec conv(int maps, int kernel, int stride = 1, int pad = 0) {
  LayerSpec l;
  l.type = "conv"; l.units = maps; l.kernel = kernel; l.stride = stride; l.pad = pad;
  return l;
}
LayerSpec dense(int units) {
  LayerSpec l;
  l.type = "dense"; l.units = units;
  return l;
}
LayerSpec simple(const std::string& type, int kernel = 0) {
  LayerSpec l;
  l.type = type; l.kernel = kernel; l.stride = kernel ? kernel : 1;
  return l;
}
bool is_kind(const std::string& t, LayerKind kind) {
  const auto type = find_layer_type(t);
  return type && type->kind == kind;
}
bool is_activation(const std::string& t) { return is_kind(t, LayerKind::Act); }
bool is_pool(const std::string& t) { return is_kind(t, LayerKind::Pool); }
}  // namespace

std::vector<std::string> builtin_model_names() { return {"lenet5", "simard2003", "mlp"}; }

ModelSpec builtin_model(const std::string& name) {
  ModelSpec m;
  m.name = name;
  if (name == "lenet5") {
    // LeCun et al. 1998 with ReLU and max pooling (the common modern form).
    m.layers = {conv(6, 5, 1, 2), simple("relu"), simple("maxpool", 2),
                conv(16, 5),      simple("relu"), simple("maxpool", 2),
                simple("flatten"), dense(120), simple("relu"), dense(84), simple("relu"),
                dense(10)};
  } else if (name == "simard2003") {
    // Simard, Steinkraus & Platt 2003: 29x29 input, 5x5 stride-2 convolutions (subsampling
    // fused into the convolution), 5 then 50 maps, 100 hidden units, tanh throughout.
    m.in_h = m.in_w = 29;
    m.layers = {conv(5, 5, 2), simple("tanh"), conv(50, 5, 2), simple("tanh"),
                simple("flatten"), dense(100), simple("tanh"), dense(10)};
  } else if (name == "mlp") {
    // LeCun et al. 1998's 784-300-100-10 perceptron, with ReLU.
    m.layers = {simple("flatten"), dense(300), simple("relu"), dense(100), simple("relu"),
                dense(10)};
  } else {
    std::string known;
    for (const auto& n : builtin_model_names()) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown model '" + name + "' (known: " + known + ", or a .json spec file)");
  }
  return m;
}

ModelSpec fuse(const ModelSpec& spec) {
  ModelSpec out = spec;
  out.layers.clear();
  for (const LayerSpec& l : spec.layers) {
    LayerSpec* prev = out.layers.empty() ? nullptr : &out.layers.back();
    const bool prev_open = prev && (is_kind(prev->type, LayerKind::Conv) || is_kind(prev->type, LayerKind::Dense));
    if (prev_open && is_activation(l.type) && prev->act == "none" && prev->pool == "none") {
      prev->act = l.type;
      continue;
    }
    if (prev_open && is_kind(prev->type, LayerKind::Conv) && is_pool(l.type) && prev->pool == "none") {
      prev->pool = l.type;
      prev->pool_window = l.kernel;
      prev->pool_stride = l.stride;
      continue;
    }
    out.layers.push_back(l);
  }
  return out;
}

ModelSpec load_model_spec(const std::string& name_or_path) {
  const std::string& n = name_or_path;
  if (n.size() <= 5 || n.compare(n.size() - 5, 5, ".json") != 0) return builtin_model(n);
  std::ifstream in(n);
  PCNN_CHECK(in, "cannot open model spec '" << n << "'");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error("'" + n + "' is not valid JSON: " + e.what());
  }
  try {
    return model_spec_from_json(j);
  } catch (const Error& e) {
    throw Error("'" + n + "': " + e.what());
  }
}

}  // namespace pcnn
