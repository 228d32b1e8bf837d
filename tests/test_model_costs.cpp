// What pcnn show prints, from the library functions it reads: LeNet-5's layers as built, with
// parameter counts, forward FLOPs and activation bytes per image worked out by hand below.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "models/model.hpp"
#include "models/model_spec.hpp"

using namespace pcnn;

TEST_SUITE("core") {

TEST_CASE("lenet5 as pcnn show counts it: parameters, FLOPs and activations per image") {
  const ModelSpec spec = builtin_model("lenet5");
  std::vector<size_t> first;
  const auto layers = build_layers(fuse(spec, &first));
  REQUIRE(layers.size() == 6);
  // conv+relu+maxpool, conv+relu+maxpool, flatten, dense+relu, dense+relu, dense.
  CHECK(first == std::vector<size_t>{0, 3, 6, 7, 9, 11});
  // Weights and biases: 6*1*5*5 + 6; 16*6*5*5 + 16; 120*400 + 120; 84*120 + 84; 10*84 + 10.
  const size_t params[] = {156, 2416, 0, 48120, 10164, 850};
  // 2 * outputs before pooling * C*R*S: 2*6*28*28*25, 2*16*10*10*150; dense 2 * in * out.
  const double flops[] = {235200, 480000, 0, 96000, 20160, 1680};
  // A layer's own activation bytes: its output (4 per float) and what it keeps. A max-pooled
  // conv keeps one argmax byte per pooled output (6*14*14 = 1176, 16*5*5 = 400), nothing else;
  // a dense keeps nothing (its output is the activation's derivative). Flatten aliases its input.
  const size_t bytes[] = {4 * 1176 + 1176, 4 * 400 + 400, 0, 4 * 120, 4 * 84, 4 * 10};
  // The transient workspace each asks for: a conv's pre-pool output (6*28*28, 16*10*10), a dense
  // with an activation its gradient before it.
  const size_t workspace[] = {4704, 1600, 0, 120, 84, 0};
  size_t param_total = 0;
  double flop_total = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    INFO("layer " << i << ": " << layers[i]->describe());
    CHECK(layers[i]->param_count() == params[i]);
    CHECK(layers[i]->forward_flops(1) == flops[i]);
    CHECK(layer_activation_bytes(*layers[i]) == bytes[i]);
    CHECK(layers[i]->workspace_floats_per_sample() == workspace[i]);
    param_total += layers[i]->param_count();
    flop_total += layers[i]->forward_flops(1);
  }
  CHECK(param_total == 61706);  // LeNet-5's well-known count (with 6 and 16 full maps)
  CHECK(flop_total == 833040);
  // The model's buffers per image: outputs 4 * (1176 + 400 + 120 + 84 + 10) = 7160; kept
  // 1176 + 400 = 1576; two gradient buffers of the largest output, 2 * 4 * 1176 = 9408; one
  // workspace of the largest need, 4 * 4704 = 18816. 36,960 in all (65,568 when the pre-pool
  // outputs were kept and every output had a gradient buffer of its own).
  const ActivationBytes a = activation_bytes(layers);
  CHECK(a.outputs == 7160);
  CHECK(a.kept == 1576);
  CHECK(a.gradients == 9408);
  CHECK(a.workspace == 18816);
  CHECK(a.total() == 36960);
  CHECK(activation_bytes_per_image(spec) == 36960);
  CHECK(initial_params(spec, 1).size() == 61706);
}

TEST_CASE("fuse says where each built layer starts in the spec") {
  ModelSpec spec = builtin_model("simard2003");
  std::vector<size_t> first = {99};  // cleared first
  CHECK(fuse(spec, &first).layers.size() == 5);
  CHECK(first == std::vector<size_t>{0, 2, 4, 5, 7});
  // A second activation after a fused one stays a layer of its own.
  spec.layers.insert(spec.layers.begin() + 2, spec.layers[1]);
  CHECK(fuse(spec, &first).layers.size() == 6);
  CHECK(first == std::vector<size_t>{0, 2, 3, 5, 6, 8});
}

TEST_CASE("fuse leaves a max pool wider than an argmax byte can name as a layer of its own") {
  // A conv then a pool of the given window over the whole 17x17 output (or less).
  auto conv_then = [](const std::string& pool, int window) {
    const std::string pool_layer =
        R"({"type": ")" + pool + R"(", "kernel": )" + std::to_string(window) + "}";
    return model_spec_from_json(nlohmann::json::parse(
        R"({"input": [1, 19, 19], "classes": 3, "layers": [)"
        R"({"type": "conv", "units": 2, "kernel": 3, "act": "relu"}, )" +
        pool_layer + R"(, {"type": "flatten"}, {"type": "dense", "units": 3}]})"));
  };
  const ModelSpec widest = fuse(conv_then("maxpool", kMaxArgmaxWindow));
  REQUIRE(widest.layers.size() == 3);
  CHECK(widest.layers[0].pool == "maxpool");
  CHECK(widest.layers[0].pool_window == kMaxArgmaxWindow);
  const ModelSpec wider = fuse(conv_then("maxpool", kMaxArgmaxWindow + 1));
  REQUIRE(wider.layers.size() == 4);
  CHECK(wider.layers[0].pool == "none");
  CHECK(wider.layers[1].type == "maxpool");
  CHECK(build_layers(wider).size() == 4);  // and it builds: the spec check passes it
  // Avg pooling keeps no indices: any window fuses.
  CHECK(fuse(conv_then("avgpool", kMaxArgmaxWindow + 1)).layers[0].pool == "avgpool");
}

}  // TEST_SUITE
