// Hostile model specs: every impossible value of issue 16 is refused by the JSON reader with the
// layer index and the key, and no spec, however built, reaches a backend with a shape that
// could crash it.
#include <nlohmann/json.hpp>

#include "backends/registry.hpp"
#include "models/model.hpp"
#include "models/serialize.hpp"
#include "models/spec_check.hpp"
#include "tests/hostile_files.hpp"

namespace pcnn::test {

namespace {
// A spec around the given layers: input [1, 8, 8], 3 classes, the layers then a dense of 3.
std::string spec_with(const std::string& layers, const std::string& top = R"("input": [1, 8, 8])") {
  return "{" + top + R"(, "classes": 3, "layers": [)" + layers +
         R"(, {"type": "flatten"}, {"type": "dense", "units": 3}]})";
}

ModelSpec parse(const std::string& text) {
  return model_spec_from_json(nlohmann::json::parse(text));
}

struct BadSpec {
  const char* why;
  std::string json;
  std::vector<std::string> words;  // each must appear in the message
};

std::vector<BadSpec> bad_specs() {
  const std::string conv = R"({"type": "conv", "units": 2, "kernel": 3)";
  return {
      {"pool stride 0 (was SIGFPE)",
       spec_with(R"({"type": "maxpool", "kernel": 2, "stride": 0})"),
       {"layer 0 (maxpool)", "'stride' must be at least 1, got 0"}},
      {"pool window 0", spec_with(R"({"type": "avgpool", "kernel": 0})"), {"layer 0", "'kernel'"}},
      {"fused pool window 0 (was a heap overflow)",
       spec_with(conv + R"(, "pool": "maxpool", "pool_window": 0})"),
       {"layer 0 (conv)", "'pool_window'"}},
      {"fused pool stride 0",
       spec_with(conv + R"(, "pool": "maxpool", "pool_stride": 0})"),
       {"'pool_stride' must be at least 1"}},
      {"fused max pool window 17 (its argmax would not fit a byte)",
       spec_with(conv + R"(, "pool": "maxpool", "pool_window": 17})", R"("input": [1, 19, 19])"),
       {"layer 0 (conv)", "'pool_window' 17 of a fused max pool is above 16",
        "use a maxpool layer of its own"}},
      {"units past 2^32 (wrapped to 10)",
       spec_with(R"({"type": "dense", "units": 4294967306})"),
       {"layer 0 (dense)", "'units' 4294967306 is outside the int range"}},
      {"units -1",
       spec_with(R"({"type": "dense", "units": -1})"),
       {"'units' must be at least 1, got -1"}},
      {"negative input height",
       spec_with(conv + "}", R"("input": [1, -28, 28])"),
       {"'input'", "-28"}},
      {"input of rank 2",
       spec_with(conv + "}", R"("input": [28, 28])"),
       {"'input' must be [channels, height, width]"}},
      {"input sizes that multiply past 2^31",
       spec_with(conv + "}", R"("input": [65536, 65536, 2])"),
       {"input would have 65536x65536x2 elements"}},
      {"huge pad (overflowed)",
       spec_with(conv + R"(, "pad": 2147483647})"),
       {"layer 0 (conv)", "'pad' 2147483647"}},
      {"pad < 0", spec_with(conv + R"(, "pad": -1})"), {"'pad' must be at least 0"}},
      {"conv stride 0", spec_with(conv + R"(, "stride": 0})"), {"'stride' must be at least 1"}},
      {"kernel larger than its padded input",
       spec_with(R"({"type": "conv", "units": 2, "kernel": 11, "pad": 1})"),
       {"layer 0 (conv)", "'kernel' 11 does not fit its padded input 10x10"}},
      {"1e300 (undefined cast to int)",
       spec_with(R"({"type": "conv", "units": 1e300, "kernel": 3})"),
       {"'units' must be an integer, got 1e+300"}},
      {"2.5",
       spec_with(R"({"type": "conv", "units": 2, "kernel": 2.5})"),
       {"'kernel' must be an integer"}},
      {"a string for a number",
       spec_with(R"({"type": "conv", "units": "6", "kernel": 3})"),
       {"'units' must be an integer"}},
      {"unknown key 'padding'",
       spec_with(conv + R"(, "padding": 1})"),
       {"layer 0 (conv): unknown key \"padding\"", "pad"}},
      {"unknown key 'activation'",
       spec_with(R"({"type": "dense", "units": 4, "activation": "relu"})"),
       {"layer 0 (dense): unknown key \"activation\"", "act"}},
      {"unknown top-level key",
       spec_with(conv + "}", R"("input": [1, 8, 8], "optimizer": "sgd")"),
       {"unknown key \"optimizer\""}},
      {"unknown activation",
       spec_with(conv + R"(, "act": "swish"})"),
       {"layer 0 (conv)", "unknown activation 'swish'", "relu"}},
      {"unknown pooling",
       spec_with(conv + R"(, "pool": "minpool"})"),
       {"unknown pooling 'minpool'", "maxpool"}},
      {"unknown layer type",
       spec_with(R"({"type": "warp"})"),
       {"layer 0", "unknown layer type 'warp'", "conv"}},
      {"missing type", spec_with(R"({"units": 3})"), {"layer 0", "'type' is missing"}},
      {"missing kernel",
       spec_with(R"({"type": "conv", "units": 3})"),
       {"layer 0 (conv)", "'kernel' is missing"}},
      {"pool keys without a pool", spec_with(conv + R"(, "pool_window": 2})"), {"need a 'pool'"}},
      {"a key of another layer type",
       spec_with(R"({"type": "relu", "kernel": 2})"),
       {"layer 0 (relu): unknown key \"kernel\""}},
      {"a control character in a word", spec_with(R"({"type": "re\nlu"})"), {"control character"}},
      {"weights past 2^31",
       spec_with(R"({"type": "dense", "units": 2000000000})", R"("input": [1, 8, 8])"),
       {"layer 0 (dense)", "weights would have 2000000000x64 elements"}},
      {"classes 0",
       R"({"input": [1, 8, 8], "classes": 0, "layers": [{"type": "flatten"}]})",
       {"'classes' must be at least 1"}},
      {"classes that the last layer does not give",
       R"({"input": [1, 2, 2], "classes": 3, "layers": [{"type": "flatten"}]})",
       {"ends in 4 outputs", "'classes'"}},
      {"no layers", R"({"input": [1, 8, 8], "layers": []})", {"'layers' is empty"}},
      {"layers not an array",
       R"({"input": [1, 8, 8], "layers": {"type": "flatten"}})",
       {"'layers' must be an array"}},
      {"a layer that is not an object",
       R"({"input": [1, 8, 8], "layers": [7]})",
       {"layer 0: must be a JSON object"}},
      {"a spec that is not an object",
       R"([1, 2, 3])",
       {"model spec: must be a JSON object, got an array of 3 values"}},
      // Pool padding, dropout and global average pooling (issue 15).
      {"pool pad equal to its kernel",
       spec_with(R"({"type": "maxpool", "kernel": 2, "pad": 2})"),
       {"layer 0 (maxpool)", "'pad' 2 must be less than 'kernel' 2"}},
      {"pool pad < 0",
       spec_with(R"({"type": "avgpool", "kernel": 2, "pad": -1})"),
       {"layer 0 (avgpool)", "'pad' must be at least 0, got -1"}},
      {"pool kernel larger than its padded input",
       spec_with(R"({"type": "avgpool", "kernel": 11, "pad": 1})"),
       {"layer 0 (avgpool)", "'kernel' 11 does not fit its padded input 10x10"}},
      {"dropout rate 1",
       spec_with(R"({"type": "dropout", "rate": 1})"),
       {"layer 0 (dropout)", "'rate' must be at least 0 and below 1, got 1"}},
      {"dropout rate < 0",
       spec_with(R"({"type": "dropout", "rate": -0.25})"),
       {"layer 0 (dropout)", "got -0.25"}},
      {"dropout rate that is 1 as a float",
       spec_with(R"({"type": "dropout", "rate": 0.99999999999})"),
       {"layer 0 (dropout)", "'rate' must be at least 0 and below 1"}},
      {"dropout rate a string",
       spec_with(R"({"type": "dropout", "rate": "0.5"})"),
       {"layer 0 (dropout)", "'rate' must be a number"}},
      {"rate on a dense layer",
       spec_with(R"({"type": "dense", "units": 4, "rate": 0.5})"),
       {"layer 0 (dense): unknown key \"rate\""}},
      {"pad on a dropout layer",
       spec_with(R"({"type": "dropout", "pad": 1})"),
       {"layer 0 (dropout): unknown key \"pad\"", "rate"}},
      {"a key on globalavgpool",
       spec_with(R"({"type": "globalavgpool", "kernel": 2})"),
       {"layer 0 (globalavgpool): unknown key \"kernel\""}},
  };
}
}  // namespace

TEST_SUITE("core") {

TEST_CASE("model specs: every impossible value is refused with its layer and key") {
  for (const BadSpec& b : bad_specs()) {
    INFO(b.why << ": " << b.json);
    const std::string msg = refusal([&] { parse(b.json); });
    CHECK_MESSAGE(!msg.empty(), "accepted");
    for (const auto& w : b.words) CHECK_MESSAGE(msg.find(w) != std::string::npos, "got: " << msg);
  }
}

TEST_CASE("model specs built in code are checked before any layer is built, on every backend") {
  // The same faults without the JSON reader: Model must refuse them before a kernel runs.
  const ModelSpec good = parse(spec_with(R"({"type": "conv", "units": 2, "kernel": 3})"));
  std::vector<std::pair<std::string, std::function<void(ModelSpec&)>>> faults = {
      {"'stride'", [](ModelSpec& s) { s.layers[0].stride = 0; }},
      {"'pool_window'",
       [](ModelSpec& s) {
         s.layers[0].pool = "maxpool";
         s.layers[0].pool_window = 0;
       }},
      {"'pool_window' 17 of a fused max pool is above 16",
       [](ModelSpec& s) {
         s.in_h = s.in_w = 19;
         s.layers[0].pool = "maxpool";
         s.layers[0].pool_window = 17;
       }},
      {"'pool_stride'",
       [](ModelSpec& s) {
         s.layers[0].pool = "avgpool";
         s.layers[0].pool_stride = -3;
       }},
      {"'pad'", [](ModelSpec& s) { s.layers[0].pad = 1 << 30; }},
      {"'input'", [](ModelSpec& s) { s.in_h = -28; }},
      {"'units'", [](ModelSpec& s) { s.layers[2].units = 0; }},
      {"'act' applies to conv, dense and batchnorm layers only",
       [](ModelSpec& s) { s.layers[1].act = "relu"; }},
      {"'pool' applies to conv layers only", [](ModelSpec& s) { s.layers[2].pool = "maxpool"; }},
      {"'pad' applies to conv and pooling layers only", [](ModelSpec& s) { s.layers[2].pad = 1; }},
      {"'rate' applies to dropout layers only", [](ModelSpec& s) { s.layers[2].rate = 0.25; }},
      {"layer 1 (dropout): 'rate'",
       [](ModelSpec& s) {
         s.layers[1].type = "dropout";
         s.layers[1].rate = std::nan("");
       }},
      {"layer 1 (maxpool): 'pad' 3 must be less than 'kernel' 3",
       [](ModelSpec& s) {
         s.layers[1].type = "maxpool";
         s.layers[1].kernel = 3;
         s.layers[1].stride = 1;
         s.layers[1].pad = 3;
       }},
  };
  for (const auto& backend : usable_backends()) {
    for (auto& [key, fault] : faults) {
      ModelSpec s = good;
      fault(s);
      INFO(backend->name() << ": " << key);
      PCNN_CHECK_REFUSED([&] { Model m(*backend, s, 4, 1); }, key);
    }
  }
}

TEST_CASE("a batch whose activations pass 2^31 floats is refused before allocating") {
  auto be = make_backend("serial");
  const ModelSpec big = parse(R"({"input": [1, 2000, 2000], "classes": 2, "layers": [
      {"type": "conv", "units": 16, "kernel": 3}, {"type": "flatten"}, {"type": "dense", "units": 2}]})");
  PCNN_CHECK_REFUSED([&] { Model m(*be, big, 64, 1); }, "a batch of 64", "use a smaller batch");
}

TEST_CASE("a stride-1 max-pool survives the JSON round trip and a saved model file") {
  const ModelSpec s = parse(spec_with(R"({"type": "conv", "units": 2, "kernel": 3}, {"type": "relu"},
      {"type": "maxpool", "kernel": 2, "stride": 1})"));
  REQUIRE(s.layers[2].stride == 1);
  CHECK(to_json(s)["layers"][2]["stride"] == 1);
  CHECK(model_spec_from_json(to_json(s)).layers[2].stride == 1);
  SavedModel m;
  m.spec = s;
  m.params = initial_params(s, 3);
  const std::string p = scratch_path("stride1.pcnn");
  save_model(p, m);
  CHECK(load_model(p).spec.layers[2].stride == 1);
  // Defaults are written only where they differ, per layer type: a pool's stride defaults to
  // its window, a convolution's to 1.
  const ModelSpec d = parse(spec_with(R"({"type": "conv", "units": 2, "kernel": 3, "stride": 2},
      {"type": "avgpool", "kernel": 1, "stride": 1})"));
  CHECK(to_json(d)["layers"][0]["stride"] == 2);
  CHECK_FALSE(to_json(d)["layers"][1].contains("stride"));
  CHECK(to_json(model_spec_from_json(to_json(d))) == to_json(d));
}

TEST_CASE("check_spec reports the geometry the model file and the fuzzer rely on") {
  const SpecGeometry g = check_spec(builtin_model("lenet5"));
  CHECK(g.param_count == initial_params(builtin_model("lenet5"), 1).size());
  REQUIRE(g.layers[0].params.size() == 2);
  CHECK(g.layers[0].params[0] == std::vector<int64_t>{6, 1, 5, 5});
  CHECK(g.layers[9].params[0] == std::vector<int64_t>{84, 120});
  CHECK(g.largest == 6 * 28 * 28);
  CHECK(check_spec(fuse(builtin_model("lenet5"))).param_count == g.param_count);
}

}  // TEST_SUITE

}  // namespace pcnn::test
