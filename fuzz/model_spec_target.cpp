// Fuzz target: the JSON spec reader, the spec's round trips, and the layers built from it (one
// forward and backward pass at batch 2 when that is cheap), so a spec that passes the checks but
// would crash a kernel is found here, under ASan and UBSan: on serial while fuzzing, on every
// usable backend when the test suite replays the corpus.
#include <nlohmann/json.hpp>

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

void run_layers(Backend& be, const ModelSpec& spec, bool fuse_layers) {
  try {
    Model model(be, spec, 2, 1, fuse_layers);
    if (model.forward_flops(2) > kMaxFlops) return;
    const FeatureShape in = model.input_shape();
    const DeviceArray<float> x(be, std::vector<float>(2 * in.size(), 0.5f));
    model.forward(2, x.get());
    be.fill(model.dlogits(), 0.1f, 2 * size_t(model.classes()));
    model.backward(2);
    be.synchronize();
  } catch (const Error& e) {
    throw FuzzFailure(std::string("a spec that passed check_spec does not build: ") + e.what());
  }
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
  run_layers(be, spec, true);
  run_layers(be, spec, false);
}

void model_spec_target(const uint8_t* data, size_t size) {
  static const std::unique_ptr<Backend> serial = make_backend("serial");
  model_spec_check(*serial, data, size);
}

}  // namespace pcnn::fuzz
