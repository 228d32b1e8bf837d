// Built-in model specs (their JSON compiled in from models/builtin/), the fusion pass, and
// loading a spec by name or file.
#include "models/model_spec.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/check.hpp"
#include "core/shapes.hpp"
#include "core/vocabulary.hpp"
#include "models/builtin_models.hpp"

namespace pcnn {

namespace {
bool is_kind(const std::string& t, LayerKind kind) {
  const auto type = find_layer_type(t);
  return type && type->kind == kind;
}
bool is_activation(const std::string& t) { return is_kind(t, LayerKind::Act); }
bool is_pool(const std::string& t) { return is_kind(t, LayerKind::Pool); }

// A spec from JSON text; `source` names the text in every error ("'net.json': layer 3 ...").
ModelSpec parse_spec_text(const std::string& text, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + " is not valid JSON: " + e.what());
  }
  try {
    return model_spec_from_json(j);
  } catch (const Error& e) {
    throw Error(source + ": " + e.what());
  }
}
}  // namespace

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  for (const BuiltinModelText& m : builtin_model_texts()) names.push_back(m.name);
  return names;
}

ModelSpec builtin_model(const std::string& name) {
  for (const BuiltinModelText& m : builtin_model_texts()) {
    if (name != m.name) continue;
    const std::string source = "built-in model '" + name + "' (models/builtin/" + name + ".json)";
    ModelSpec spec = parse_spec_text(m.json, source);
    // The file's stem is the name users type; a "name" inside saying otherwise is a slip.
    PCNN_CHECK(spec.name == name, source << ": its 'name' is '" << spec.name << "'");
    return spec;
  }
  std::string known;
  for (const auto& n : builtin_model_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error("unknown model '" + name + "' (known: " + known + ", or a .json spec file)");
}

ModelSpec fuse(const ModelSpec& spec, std::vector<size_t>* first) {
  ModelSpec out = spec;
  out.layers.clear();
  if (first) first->clear();
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec& l = spec.layers[i];
    LayerSpec* prev = out.layers.empty() ? nullptr : &out.layers.back();
    const bool prev_open = prev && (is_kind(prev->type, LayerKind::Conv) || is_kind(prev->type, LayerKind::Dense));
    // Batch norm takes the activation after it (its kernels apply it); nothing else.
    const bool prev_bn = prev && is_kind(prev->type, LayerKind::BatchNorm);
    if ((prev_open || prev_bn) && is_activation(l.type) && prev->act == "none" &&
        prev->pool == "none") {
      prev->act = l.type;
      continue;
    }
    // A padded pool stays a layer of its own: the fused kernels pool without padding; so does a
    // max pool too wide for one-byte indices (core/shapes.hpp, kMaxArgmaxWindow).
    const bool indexable = !is_kind(l.type, LayerKind::Pool) ||
                           parse_pool(l.type) != PoolKind::Max || l.kernel <= kMaxArgmaxWindow;
    if (prev_open && is_kind(prev->type, LayerKind::Conv) && is_pool(l.type) &&
        prev->pool == "none" && l.pad == 0 && indexable) {
      prev->pool = l.type;
      prev->pool_window = l.kernel;
      prev->pool_stride = l.stride;
      continue;
    }
    out.layers.push_back(l);
    if (first) first->push_back(i);
  }
  return out;
}

ModelSpec load_model_spec(const std::string& name_or_path) {
  const std::string& n = name_or_path;
  if (n.size() <= 5 || n.compare(n.size() - 5, 5, ".json") != 0) return builtin_model(n);
  std::ifstream in(n, std::ios::binary);
  PCNN_CHECK(in, "cannot open model spec '" << n << "'");
  std::ostringstream text;
  text << in.rdbuf();
  PCNN_CHECK(in.good() || in.eof(), "cannot read model spec '" << n << "'");
  return parse_spec_text(text.str(), "'" + n + "'");
}

}  // namespace pcnn
