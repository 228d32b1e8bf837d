// What pcnn show prints, from the library functions it reads: LeNet-5's layers as built, with
// parameter counts, forward FLOPs and activation floats per image worked out by hand below.
#include <doctest/doctest.h>

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
  // Output and its gradient (2 per element), and what the layer keeps: a pooled conv its
  // pre-pool output and that output's gradient (2 * 6*28*28, 2 * 16*10*10), a dense with an
  // activation the gradient before it. Flatten aliases its input.
  const size_t floats[] = {2 * 1176 + 2 * 4704, 2 * 400 + 2 * 1600, 0, 2 * 120 + 120,
                           2 * 84 + 84, 2 * 10};
  size_t param_total = 0, float_total = 0;
  double flop_total = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    INFO("layer " << i << ": " << layers[i]->describe());
    CHECK(layers[i]->param_count() == params[i]);
    CHECK(layers[i]->forward_flops(1) == flops[i]);
    CHECK(activation_floats_per_sample(*layers[i]) == floats[i]);
    param_total += layers[i]->param_count();
    flop_total += layers[i]->forward_flops(1);
    float_total += activation_floats_per_sample(*layers[i]);
  }
  CHECK(param_total == 61706);  // LeNet-5's well-known count (with 6 and 16 full maps)
  CHECK(flop_total == 833040);
  CHECK(float_total * sizeof(float) == 65568);
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

}  // TEST_SUITE
