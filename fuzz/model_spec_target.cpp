// Fuzz target: the JSON spec reader, the spec's round trips, and the layers built from it (one
// forward and backward pass at batch 2 when that is cheap), so a spec that passes the checks but
// would crash a kernel is found here, under ASan and UBSan. A backend other than serial is also
// compared with serial (logits and parameter gradients), and the outputs must be finite: a
// kernel that reads the wrong window without crashing shows up as a disagreement or a NaN.
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "backends/registry.hpp"
#include "core/check.hpp"
#include "fuzz/targets.hpp"
#include "models/model.hpp"
#include "models/spec_check.hpp"

namespace pcnn::fuzz {

namespace {
// Each run must stay well under a millisecond or two for the fuzzer to get anywhere.
constexpr uint64_t kMaxParams = 1 << 18;
constexpr int64_t kMaxActivation = 1 << 16;
constexpr double kMaxFlops = 2e7;
// Summation order differs between backends; float rounding stays far below this.
constexpr double kTolerance = 1e-3;

// The ground truth (serial), named by the registry.
Backend& reference() {
  static const std::unique_ptr<Backend> be = make_backend(reference_backend().name);
  return *be;
}

// Saves a spec as JSON and reads it back: an Error here is a spec that saves but cannot load.
void round_trip(const ModelSpec& spec, const char* which) {
  const nlohmann::json saved = to_json(spec);
  try {
    require(to_json(model_spec_from_json(saved)) == saved,
            std::string(which) + " spec changed through JSON: " + saved.dump());
  } catch (const Error& e) {
    throw FuzzFailure(std::string(which) + " spec saves but does not load: " + e.what());
  }
}

struct Outputs {
  std::vector<float> logits, grads;
};

// One forward and backward pass at batch 2; nullopt when it would be too slow to fuzz.
std::optional<Outputs> run_layers(Backend& be, const ModelSpec& spec, bool fuse_layers) {
  try {
    Model model(be, spec, 2, 1, fuse_layers);
    if (model.forward_flops(2) > kMaxFlops) return std::nullopt;
    const FeatureShape in = model.input_shape();
    const DeviceArray<float> x(be, std::vector<float>(2 * in.size(), 0.5f));
    model.forward(2, x.get());
    Outputs out{std::vector<float>(2 * size_t(model.classes())), std::vector<float>(model.param_count())};
    be.download(out.logits.data(), model.logits(), out.logits.size() * sizeof(float));
    be.fill(model.dlogits(), 0.1f, out.logits.size());
    model.backward(2);
    be.download(out.grads.data(), model.grads(), out.grads.size() * sizeof(float));
    return out;
  } catch (const Error& e) {
    throw FuzzFailure(std::string("a spec that passed check_spec does not build: ") + e.what());
  }
}

bool finite(const Outputs& o) {
  for (const auto* v : {&o.logits, &o.grads})
    for (float x : *v)
      if (!std::isfinite(x)) return false;
  return true;
}

// Normalised error within kTolerance.
bool agree(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    norm += double(want[i]) * want[i];
  }
  return std::sqrt(diff) <= kTolerance * std::max(std::sqrt(norm), 1e-6);
}
}  // namespace

void model_spec_check(Backend& be, const uint8_t* data, size_t size) {
  const auto j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return;
  ModelSpec spec;
  try {
    spec = model_spec_from_json(j);
  } catch (const Error&) {
    return;
  }
  round_trip(spec, "the");
  const ModelSpec fused = fuse(spec);
  round_trip(fused, "the fused");
  const SpecGeometry geo = check_spec(spec);
  require(check_spec(fused).param_count == geo.param_count, "fusing changed the parameter count");
  if (geo.param_count > kMaxParams || geo.largest > kMaxActivation) return;
  const std::string where = " on " + to_json(spec).dump();
  for (bool fuse_layers : {true, false}) {
    // With inputs of 0.5 and initial weights, every value stays far from overflow: a NaN or
    // Inf means a kernel read what it should not (a max over an empty window, say).
    const auto got = run_layers(be, spec, fuse_layers);
    if (!got) continue;
    require(finite(*got), be.name() + " gives a NaN or Inf" + where);
    if (be.name() == reference_backend().name) continue;
    const auto want = run_layers(reference(), spec, fuse_layers);
    require(finite(*want) && agree(got->logits, want->logits) && agree(got->grads, want->grads),
            be.name() + " disagrees with serial" + where + (fuse_layers ? " (fused)" : " (unfused)"));
  }
}

void model_spec_target(const uint8_t* data, size_t size) {
  // The first parallel CPU backend compiled into the fuzzing build (registry order: fastest
  // first), checked against the reference.
  static const std::unique_ptr<Backend> be = [] {
    for (const auto& b : compiled_backends())
      if (b.kind == BackendKind::Cpu && !b.sequential) return make_backend(b.name);
    return make_backend(reference_backend().name);
  }();
  model_spec_check(*be, data, size);
}

}  // namespace pcnn::fuzz
