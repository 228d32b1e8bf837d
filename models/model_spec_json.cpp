// Model specs as JSON. The reader trusts nothing: each layer type has a list of the keys it
// takes, every number must be an integer within int (nlohmann would otherwise cast 1e300 or
// 4294967306 to int), and the finished spec goes through check_spec.
#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "core/vocabulary.hpp"
#include "models/json_text.hpp"
#include "models/model_spec.hpp"
#include "models/spec_check.hpp"

namespace pcnn {

using nlohmann::json;

// Anything but these keys is a typo to report, not to skip.
const std::vector<std::string>& spec_keys() {
  static const std::vector<std::string> keys = {"name", "input", "classes", "layers"};
  return keys;
}

const std::vector<std::string>& layer_keys(LayerKind kind) {
  static const std::vector<std::string> conv = {"units", "kernel",      "stride",     "pad",
                                                "act",   "pool",        "pool_window", "pool_stride"};
  static const std::vector<std::string> dense = {"units", "act"};
  static const std::vector<std::string> pool = {"kernel", "stride", "pad"};
  static const std::vector<std::string> batchnorm = {"eps", "momentum", "act"};
  static const std::vector<std::string> dropout = {"rate"};
  static const std::vector<std::string> none;
  switch (kind) {
    case LayerKind::Conv: return conv;
    case LayerKind::Dense: return dense;
    case LayerKind::Pool: return pool;
    case LayerKind::BatchNorm: return batchnorm;
    case LayerKind::Dropout: return dropout;
    default: return none;
  }
}

namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : ", ") + w;
  return s;
}

// One object being read: its place in the spec ("layer 3 (conv)") and the keys it may hold.
class Reader {
 public:
  enum Keys { OnlyListed, AnyKeys };  // AnyKeys: a first look, before the type is known
  Reader(const json& j, std::string where, std::vector<std::string> keys, Keys mode = OnlyListed)
      : j_(j), where_(std::move(where)), keys_(std::move(keys)) {
    if (!j.is_object()) fail("must be a JSON object, got " + brief(j));
    for (const auto& [key, value] : j.items())
      if (mode == OnlyListed && std::find(keys_.begin(), keys_.end(), key) == keys_.end())
        fail("unknown key " + brief(key) + " (" + joined(keys_) + ")");
  }
  [[noreturn]] void fail(const std::string& msg) const { throw Error(where_ + ": " + msg); }
  bool has(const char* key) const { return j_.contains(key); }
  const json& at(const char* key) const {
    if (!has(key)) fail("'" + std::string(key) + "' is missing");
    return j_.at(key);
  }
  int integer(const char* key, int fallback) const { return has(key) ? integer(at(key), key) : fallback; }
  int integer(const json& v, const std::string& key) const {
    if (!v.is_number_integer()) fail("'" + key + "' must be an integer, got " + brief(v));
    const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(INT_MAX)
                                             : v.get<int64_t>() >= INT_MIN && v.get<int64_t>() <= INT_MAX;
    if (!fits) fail("'" + key + "' " + brief(v) + " is outside the int range");
    return int(v.get<int64_t>());
  }
  // Any finite JSON number (an integer too); check_spec judges its range.
  double number(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = at(key);
    if (!v.is_number()) fail("'" + std::string(key) + "' must be a number, got " + brief(v));
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail("'" + std::string(key) + "' " + brief(v) + " is not finite");
    return d;
  }
  // The same, held in a float: refused when it does not fit one.
  float real(const char* key, float fallback) const {
    const double d = number(key, fallback);
    if (std::fabs(d) > double(FLT_MAX))
      fail("'" + std::string(key) + "' " + brief(at(key)) + " is not a finite float");
    return float(d);
  }
  std::string word(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    const json& v = at(key);
    if (!v.is_string()) fail("'" + std::string(key) + "' must be a string, got " + brief(v));
    // Words end up quoted in error messages, which must stay one line.
    for (unsigned char c : v.get_ref<const std::string&>())
      if (c < 0x20 || c == 0x7f) fail("'" + std::string(key) + "' " + brief(v) + " holds a control character");
    return v.get<std::string>();
  }

 private:
  const json& j_;
  std::string where_;
  std::vector<std::string> keys_;
};

LayerSpec layer_from_json(const json& lj, size_t i) {
  const std::string at = "layer " + std::to_string(i);
  LayerSpec l;
  l.type = Reader(lj, at, {}, Reader::AnyKeys).word("type", "");
  if (l.type.empty()) throw Error(at + ": 'type' is missing");
  LayerType kind;
  try {
    kind = parse_layer_type(l.type);
  } catch (const Error& e) {
    throw Error(at + ": " + e.what());
  }
  std::vector<std::string> keys = {"type"};
  for (const auto& k : layer_keys(kind.kind)) keys.push_back(k);
  const Reader r(lj, at + " (" + l.type + ")", keys);
  const bool needs_units = kind.kind == LayerKind::Conv || kind.kind == LayerKind::Dense;
  const bool needs_kernel = kind.kind == LayerKind::Conv || kind.kind == LayerKind::Pool;
  if (needs_units) l.units = r.integer(r.at("units"), "units");
  if (needs_kernel) l.kernel = r.integer(r.at("kernel"), "kernel");
  l.stride = r.integer("stride", kind.kind == LayerKind::Pool ? l.kernel : 1);
  l.pad = r.integer("pad", 0);
  l.act = r.word("act", "none");
  l.pool = r.word("pool", "none");
  if ((r.has("pool_window") || r.has("pool_stride")) && l.pool == "none")
    r.fail("'pool_window' and 'pool_stride' need a 'pool'");
  l.pool_window = r.integer("pool_window", 2);
  l.pool_stride = r.integer("pool_stride", l.pool_window);
  l.eps = r.real("eps", l.eps);
  l.momentum = r.real("momentum", l.momentum);
  l.rate = r.number("rate", 0.5);
  return l;
}
}  // namespace

nlohmann::json to_json(const ModelSpec& spec) {
  json layers = json::array();
  for (const LayerSpec& l : spec.layers) {
    json j = {{"type", l.type}};
    const auto type = find_layer_type(l.type);
    const LayerKind kind = type ? type->kind : LayerKind::Act;  // unknown: the type alone
    if (kind == LayerKind::Conv || kind == LayerKind::Dense) j["units"] = l.units;
    if (kind == LayerKind::Conv || kind == LayerKind::Pool) j["kernel"] = l.kernel;
    // The reader's default stride is 1 for a convolution and the window for a pool.
    if (kind == LayerKind::Conv && l.stride != 1) j["stride"] = l.stride;
    if (kind == LayerKind::Pool && l.stride != l.kernel) j["stride"] = l.stride;
    if ((kind == LayerKind::Conv || kind == LayerKind::Pool) && l.pad) j["pad"] = l.pad;
    if (kind == LayerKind::Dropout && l.rate != 0.5) j["rate"] = l.rate;
    const bool takes_act = kind == LayerKind::Conv || kind == LayerKind::Dense || kind == LayerKind::BatchNorm;
    if (takes_act && l.act != "none") j["act"] = l.act;
    if (kind == LayerKind::Conv && l.pool != "none") {
      j["pool"] = l.pool;
      j["pool_window"] = l.pool_window;
      j["pool_stride"] = l.pool_stride;
    }
    if (kind == LayerKind::BatchNorm && l.eps != LayerSpec().eps) j["eps"] = l.eps;
    if (kind == LayerKind::BatchNorm && l.momentum != LayerSpec().momentum) j["momentum"] = l.momentum;
    layers.push_back(j);
  }
  return {{"name", spec.name},       {"input", {spec.in_c, spec.in_h, spec.in_w}},
          {"classes", spec.classes}, {"layers", layers}};
}

ModelSpec model_spec_from_json(const nlohmann::json& j) {
  const Reader r(j, "model spec", spec_keys());
  ModelSpec m;
  m.name = r.word("name", "custom");
  const json& in = r.at("input");
  if (!in.is_array() || in.size() != 3)
    r.fail("'input' must be [channels, height, width], got " + brief(in));
  m.in_c = r.integer(in[0], "input");
  m.in_h = r.integer(in[1], "input");
  m.in_w = r.integer(in[2], "input");
  m.classes = r.integer("classes", 10);
  const json& layers = r.at("layers");
  if (!layers.is_array()) r.fail("'layers' must be an array, got " + brief(layers));
  for (size_t i = 0; i < layers.size(); ++i) m.layers.push_back(layer_from_json(layers[i], i));
  check_spec(m);
  return m;
}

}  // namespace pcnn
