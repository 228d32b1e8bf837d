// Walks a spec's shapes layer by layer, refusing the first impossible value with its layer and
// key. Sizes stay in int64_t (each input below 2^31, so sums and one product cannot wrap) and
// every product of three or four goes through checked_product.
#include "models/spec_check.hpp"

#include <algorithm>
#include <sstream>

#include "core/check.hpp"
#include "core/checked_math.hpp"
#include "core/shapes.hpp"
#include "core/vocabulary.hpp"

namespace pcnn {

namespace {
// Builds the "layer 3 (conv): " prefix once per layer, so every message names where it is.
class Where {
 public:
  Where(size_t i, const std::string& type) : prefix_("layer " + std::to_string(i) + " (" + type + "): ") {}
  explicit Where(std::string prefix) : prefix_(std::move(prefix)) {}
  [[noreturn]] void fail(const std::string& msg) const { throw Error(prefix_ + msg); }
  void at_least(int64_t v, int64_t min, const char* key) const {
    if (v < min) fail("'" + std::string(key) + "' must be at least " + std::to_string(min) +
                      ", got " + std::to_string(v));
  }
  // A tensor (or one sample's features) must fit the int indexing of every backend.
  int64_t elements(std::initializer_list<int64_t> dims, const char* what) const {
    const auto n = checked_product(dims);
    if (!n || *n > kMaxElements) {
      std::ostringstream os;
      os << what << " would have ";
      const char* sep = "";
      for (int64_t d : dims) { os << sep << d; sep = "x"; }
      os << " elements, more than " << kMaxElements;
      fail(os.str());
    }
    return int64_t(*n);
  }
  template <class F>
  auto word(F&& parse) const -> decltype(parse()) {
    try {
      return parse();
    } catch (const Error& e) {
      fail(e.what());
    }
  }

 private:
  std::string prefix_;
};

std::string number_text(float v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// A kernel or window must fit its (padded) input: the output has at least one row and column.
void fits(const Where& at, int64_t window, int64_t h, int64_t w, int64_t pad, const char* key) {
  // Shapes are computed in int afterwards (Conv2dShape::P), so H + 2*pad must stay an int.
  if (std::max(h, w) + 2 * pad > int64_t(kMaxElements))
    at.fail("'pad' " + std::to_string(pad) + " makes the padded input larger than " +
            std::to_string(kMaxElements));
  if (window > h + 2 * pad || window > w + 2 * pad) {
    std::ostringstream os;
    os << "'" << key << "' " << window << " does not fit its " << (pad ? "padded " : "")
       << "input " << h + 2 * pad << "x" << w + 2 * pad;
    at.fail(os.str());
  }
}

LayerGeometry conv_geometry(const Where& at, const LayerSpec& l, const LayerGeometry& in) {
  at.at_least(l.units, 1, "units");
  at.at_least(l.kernel, 1, "kernel");
  at.at_least(l.stride, 1, "stride");
  at.at_least(l.pad, 0, "pad");
  // A pad of a whole kernel only adds outputs that see nothing but zeros.
  if (l.pad >= l.kernel) at.fail("'pad' " + std::to_string(l.pad) + " must be less than 'kernel' " +
                                 std::to_string(l.kernel));
  fits(at, l.kernel, in.h, in.w, l.pad, "kernel");
  at.word([&] { return parse_activation(l.act); });
  const PoolKind pool = at.word([&] { return parse_pool(l.pool); });
  LayerGeometry g;
  g.c = l.units;
  g.h = (in.h + 2 * int64_t(l.pad) - l.kernel) / l.stride + 1;
  g.w = (in.w + 2 * int64_t(l.pad) - l.kernel) / l.stride + 1;
  g.largest = at.elements({g.c, g.h, g.w}, "the output");
  g.params = {{l.units, in.c, l.kernel, l.kernel}, {l.units}};
  at.elements({l.units, in.c, l.kernel, l.kernel}, "the weights");
  if (pool != PoolKind::None) {
    at.at_least(l.pool_window, 1, "pool_window");
    at.at_least(l.pool_stride, 1, "pool_stride");
    fits(at, l.pool_window, g.h, g.w, 0, "pool_window");
    if (pool == PoolKind::Max && l.pool_window > kMaxArgmaxWindow)
      at.fail("'pool_window' " + std::to_string(l.pool_window) + " of a fused max pool is above " +
              std::to_string(kMaxArgmaxWindow) + ": use a maxpool layer of its own");
    g.h = (g.h - l.pool_window) / l.pool_stride + 1;
    g.w = (g.w - l.pool_window) / l.pool_stride + 1;
  }
  return g;
}

LayerGeometry layer_geometry(const Where& at, const LayerSpec& l, const LayerGeometry& in) {
  const LayerType type = at.word([&] { return parse_layer_type(l.type); });
  // A batchnorm applies one in the same pass (written so, or folded in by fuse()).
  const bool has_act = type.kind == LayerKind::Conv || type.kind == LayerKind::Dense ||
                       type.kind == LayerKind::BatchNorm;
  if (!has_act && l.act != "none") at.fail("'act' applies to conv, dense and batchnorm layers only");
  if (type.kind != LayerKind::Conv && l.pool != "none") at.fail("'pool' applies to conv layers only");
  if (type.kind != LayerKind::Conv && type.kind != LayerKind::Pool && l.pad != 0)
    at.fail("'pad' applies to conv and pooling layers only");
  if (type.kind != LayerKind::Dropout && l.rate != 0.5) at.fail("'rate' applies to dropout layers only");
  LayerGeometry g = in;
  g.params.clear();
  g.state.clear();
  g.largest = 0;
  switch (type.kind) {
    case LayerKind::Conv:
      g = conv_geometry(at, l, in);
      break;
    case LayerKind::Dense: {
      at.at_least(l.units, 1, "units");
      at.word([&] { return parse_activation(l.act); });
      const int64_t inputs = in.c * in.h * in.w;  // each factor checked below 2^31 with the rest
      at.elements({l.units, inputs}, "the weights");
      g = {l.units, 1, 1, l.units, {{l.units, inputs}, {l.units}}, {}};
      break;
    }
    case LayerKind::Pool:
      at.at_least(l.kernel, 1, "kernel");
      at.at_least(l.stride, 1, "stride");
      at.at_least(l.pad, 0, "pad");
      // A window of padding alone would have nothing to take the max or the mean of.
      if (l.pad >= l.kernel)
        at.fail("'pad' " + std::to_string(l.pad) + " must be less than 'kernel' " +
                std::to_string(l.kernel));
      fits(at, l.kernel, in.h, in.w, l.pad, "kernel");
      g.h = window_positions<int64_t>(in.h, l.kernel, l.stride, l.pad);
      g.w = window_positions<int64_t>(in.w, l.kernel, l.stride, l.pad);
      break;
    case LayerKind::Dropout:
      // !(rate >= 0) also refuses a NaN set in code (JSON has none); a rate that rounds to 1
      // as a float would drop everything.
      if (!(l.rate >= 0.0 && l.rate < 1.0 && float(l.rate) < 1.f)) {
        std::ostringstream os;
        os << "'rate' must be at least 0 and below 1, got " << l.rate;
        at.fail(os.str());
      }
      break;
    case LayerKind::GlobalAvgPool:
      g.h = g.w = 1;
      break;
    case LayerKind::Flatten:
      g.c = in.c * in.h * in.w;
      g.h = g.w = 1;
      break;
    case LayerKind::Act:
      break;
    case LayerKind::BatchNorm:
      // eps > 0 keeps 1/sqrt(var + eps) finite on a constant channel; momentum is a weight.
      if (!(l.eps > 0.f)) at.fail("'eps' must be greater than 0, got " + number_text(l.eps));
      if (!(l.momentum >= 0.f && l.momentum <= 1.f))
        at.fail("'momentum' must be between 0 and 1, got " + number_text(l.momentum));
      at.word([&] { return parse_activation(l.act); });
      g.params = {{in.c}, {in.c}};
      g.state = {{in.c}, {in.c}};
      break;
  }
  g.largest = std::max(g.largest, at.elements({g.c, g.h, g.w}, "the output"));
  return g;
}
}  // namespace

SpecGeometry check_spec(const ModelSpec& spec) {
  const Where top("model '" + spec.name + "': ");
  if (std::min({spec.in_c, spec.in_h, spec.in_w}) < 1)
    top.fail("'input' [channels, height, width] must be at least 1 each, got [" +
             std::to_string(spec.in_c) + ", " + std::to_string(spec.in_h) + ", " +
             std::to_string(spec.in_w) + "]");
  top.at_least(spec.classes, 1, "classes");
  if (spec.layers.empty()) top.fail("'layers' is empty");
  SpecGeometry geo;
  LayerGeometry shape;
  shape.c = spec.in_c; shape.h = spec.in_h; shape.w = spec.in_w;
  shape.largest = top.elements({shape.c, shape.h, shape.w}, "the input");
  geo.largest = shape.largest;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    shape = layer_geometry(Where(i, spec.layers[i].type), spec.layers[i], shape);
    for (const auto& t : shape.params) geo.param_count += *checked_product(t);
    for (const auto& t : shape.state) geo.state_count += *checked_product(t);
    geo.largest = std::max(geo.largest, shape.largest);
    geo.layers.push_back(shape);
  }
  const int64_t outputs = shape.c * shape.h * shape.w;
  if (outputs != spec.classes)
    top.fail("ends in " + std::to_string(outputs) + " outputs, but 'classes' says " +
             std::to_string(spec.classes) + " logits");
  return geo;
}

}  // namespace pcnn
