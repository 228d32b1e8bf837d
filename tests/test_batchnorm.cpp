// The batchnorm layer end to end: its spec keys and their errors, a conv -> batchnorm -> relu ->
// pool -> dense model that trains on every backend with serial's loss curve, running statistics
// that survive a model file and a restored training state, and inference that uses them.
//
// Tolerances: parameters and running statistics after a run, 1e-4 normalised (each step's fp32
// differences, ~1e-6, carried by later steps, as tests/test_models.cpp states); losses 1e-4
// relative. A wrong statistic, a missing running update or a wrong gradient is off by > 1e-2.
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "models/model.hpp"
#include "models/serialize.hpp"
#include "models/spec_check.hpp"
#include "tests/harness.hpp"
#include "tests/hostile_files.hpp"
#include "tests/synthetic.hpp"
#include "train/trainer.hpp"

namespace pcnn::test {

namespace {
constexpr double kRunTol = 1e-4;

// Both uses of batchnorm: per channel after a convolution (over N, H, W) and per unit after a
// dense layer (over N).
ModelSpec bn_spec(const std::string& bn_keys = "") {
  return model_spec_from_json(nlohmann::json::parse(R"({"name": "bn", "input": [1, 12, 12],
      "classes": 10, "layers": [{"type": "conv", "units": 4, "kernel": 3},
      {"type": "batchnorm")" + bn_keys + R"(}, {"type": "relu"}, {"type": "maxpool", "kernel": 2},
      {"type": "dense", "units": 16}, {"type": "batchnorm", "momentum": 0.3}, {"type": "relu"},
      {"type": "dense", "units": 10}]})"));
}

const Normalization kNorm{0.2f, 3.f};

TrainConfig bn_config() {
  TrainConfig cfg;
  cfg.batch = 8;
  cfg.seed = 3;
  // SGD, not Adam: a convolution's bias before a batchnorm has a gradient of zero plus rounding
  // noise, which Adam would scale up to full steps, different on every backend.
  cfg.optimizer.kind = "sgd";
  cfg.optimizer.lr = 0.05f;
  cfg.optimizer.momentum = 0.9f;
  cfg.optimizer.weight_decay = 1e-4f;
  return cfg;
}

// 3 epochs of bn_spec() on 48 synthetic 12x12 images.
TrainedRun train_bn(Backend& be) {
  return train_run(be, bn_spec(), 42, synthetic_dataset(48, 12, 12, 5), bn_config(), 3);
}
}  // namespace

TEST_SUITE("core") {

TEST_CASE("batchnorm ops on serial: PyTorch's numbers for a small batch, by hand") {
  // One channel of x = {1, 2, 3, 4} (N 2, HW 2) and one of {5, 5, 5, 5} (zero variance).
  Backend& be = reference();
  const std::vector<float> x = {1, 2, 5, 5, 3, 4, 5, 5};  // (N 2, C 2, HW 2)
  auto xd = to_device(be, x), gamma = to_device(be, std::vector<float>{2.f, 1.f}),
       beta = to_device(be, std::vector<float>{0.5f, -1.f}),
       rmean = to_device(be, std::vector<float>{0.f, 1.f}),
       rvar = to_device(be, std::vector<float>{1.f, 2.f});
  DeviceArray<float> y(be, 8), mean(be, 2), inv_std(be, 2);
  be.batchnorm_forward_train(2, 2, 2, Activation::None, 1e-5f, 0.1f, xd.get(), gamma.get(), beta.get(), y.get(),
                             mean.get(), inv_std.get(), rmean.get(), rvar.get());
  const double s = 1.0 / std::sqrt(1.25 + 1e-5);  // biased variance of {1,2,3,4}: 1.25
  const std::vector<float> yv = y.download();
  CHECK(yv[0] == doctest::Approx(2 * (1 - 2.5) * s + 0.5).epsilon(1e-6));
  CHECK(yv[5] == doctest::Approx(2 * (4 - 2.5) * s + 0.5).epsilon(1e-6));
  CHECK(yv[2] == -1.f);  // a constant channel: x - mean = 0, beta alone
  CHECK(mean.download() == std::vector<float>{2.5f, 5.f});
  // running = 0.9 running + 0.1 batch, the variance unbiased: 1.25 * 4/3.
  CHECK(rmean.download()[0] == doctest::Approx(0.25).epsilon(1e-6));
  CHECK(rmean.download()[1] == doctest::Approx(0.9 + 0.5).epsilon(1e-6));
  CHECK(rvar.download()[0] == doctest::Approx(0.9 + 0.1 * 1.25 * 4 / 3).epsilon(1e-6));
  CHECK(rvar.download()[1] == doctest::Approx(1.8).epsilon(1e-6));
  // Inference with those running statistics.
  be.batchnorm_forward_infer(2, 2, 2, Activation::None, 1e-5f, xd.get(), gamma.get(), beta.get(), rmean.get(),
                             rvar.get(), y.get());
  const double rv = 0.9 + 0.1 * 1.25 * 4 / 3;
  CHECK(y.download()[0] == doctest::Approx(2 * (1 - 0.25) / std::sqrt(rv + 1e-5) + 0.5).epsilon(1e-6));
  // Backward: dbeta = sum dy, dgamma = sum dy * xhat; dy = 1 everywhere gives dx = 0 (a shift
  // of every input is normalised away).
  auto dy = to_device(be, std::vector<float>(8, 1.f));
  DeviceArray<float> dx(be, 8), dgamma(be, 2), dbeta(be, 2);
  be.batchnorm_backward(2, 2, 2, Activation::None, xd.get(), nullptr, dy.get(), gamma.get(),
                        mean.get(), inv_std.get(), dx.get(), dgamma.get(), dbeta.get());
  CHECK(dbeta.download() == std::vector<float>{4.f, 4.f});
  CHECK(std::fabs(dgamma.download()[0]) < 1e-6f);
  for (float v : dx.download()) CHECK(std::fabs(v) < 1e-5f);
}

TEST_CASE("batchnorm spec: defaults, keys, JSON round trip, geometry") {
  const ModelSpec s = bn_spec(R"(, "eps": 0.001)");
  CHECK(s.layers[1].eps == 0.001f);
  CHECK(s.layers[1].momentum == 0.1f);
  CHECK(s.layers[5].eps == 1e-5f);
  CHECK(s.layers[5].momentum == 0.3f);
  CHECK(to_json(model_spec_from_json(to_json(s))) == to_json(s));
  CHECK(to_json(bn_spec())["layers"][1] == nlohmann::json{{"type", "batchnorm"}});
  // A batchnorm built with its activation (in code, or fused) keeps it through a file.
  const ModelSpec fused = fuse(s);
  REQUIRE(fused.layers[1].act == "relu");
  CHECK(to_json(fused)["layers"][1]["act"] == "relu");
  CHECK(to_json(model_spec_from_json(to_json(fused))) == to_json(fused));
  const SpecGeometry g = check_spec(s);
  CHECK(g.layers[1].params == std::vector<std::vector<int64_t>>{{4}, {4}});
  CHECK(g.layers[1].state == std::vector<std::vector<int64_t>>{{4}, {4}});
  CHECK(g.layers[5].state == std::vector<std::vector<int64_t>>{{16}, {16}});
  CHECK(g.state_count == 40);
  // gamma 1 and beta 0; running mean 0 and variance 1. Built fused: the relu after it folded in.
  const auto layers = build_layers(fuse(s));
  REQUIRE(layers[1]->param_count() == 8);
  CHECK(layers[1]->describe() == "batchnorm x4 eps 0.001 +relu");
  const std::vector<float> state = initial_state(s);
  REQUIRE(state.size() == 40);
  CHECK(state[0] == 0.f);
  CHECK(state[4] == 1.f);
  // The conv before a batchnorm and a relu gets the relu's (Kaiming) initialisation: the same
  // weights as the conv with the relu right after it.
  ModelSpec direct = s;
  direct.layers.erase(direct.layers.begin() + 1);
  direct.layers.erase(direct.layers.begin() + 4);
  const auto a = initial_params(s, 9), b = initial_params(direct, 9);
  CHECK(std::vector<float>(a.begin(), a.begin() + 40) == std::vector<float>(b.begin(), b.begin() + 40));
}

TEST_CASE("batchnorm spec: bad keys and values are refused with the layer and the key") {
  PCNN_CHECK_REFUSED([] { bn_spec(R"(, "momentum": 1.5)"); },
                     "layer 1 (batchnorm): 'momentum' must be between 0 and 1, got 1.5");
  PCNN_CHECK_REFUSED([] { bn_spec(R"(, "momentum": -0.1)"); }, "layer 1 (batchnorm): 'momentum'");
  PCNN_CHECK_REFUSED([] { bn_spec(R"(, "eps": 0)"); },
                     "layer 1 (batchnorm): 'eps' must be greater than 0, got 0");
  PCNN_CHECK_REFUSED([] { bn_spec(R"(, "eps": "small")"); },
                     "layer 1 (batchnorm): 'eps' must be a number, got \"small\"");
  PCNN_CHECK_REFUSED([] { bn_spec(R"(, "eps": 1e300)"); }, "layer 1 (batchnorm): 'eps'",
                     "is not a finite float");
  PCNN_CHECK_REFUSED([] { bn_spec(R"(, "epsilon": 0.1)"); },
                     "layer 1 (batchnorm): unknown key \"epsilon\" (type, eps, momentum, act)");
  PCNN_CHECK_REFUSED([] { check_spec(bn_spec(R"(, "act": "swish")")); }, "layer 1 (batchnorm)", "swish");
}

TEST_CASE("the builder fuses batchnorm + activation; the fused model computes the unfused one") {
  const ModelSpec spec = bn_spec();
  const ModelSpec fused = fuse(spec);
  // conv, batchnorm +relu, maxpool, dense, batchnorm +relu, dense.
  REQUIRE(fused.layers.size() == 6);
  CHECK(fused.layers[1].type == "batchnorm");
  CHECK(fused.layers[1].act == "relu");
  CHECK(fused.layers[4].act == "relu");
  CHECK(to_json(spec) == to_json(bn_spec()));  // the file's form is untouched: two layers each
  Backend& be = reference();
  Model a(be, spec, 6, 5, true), b(be, spec, 6, 5, false);
  CHECK(a.layer(1).describe() == "batchnorm x4 +relu");
  CHECK(b.layer(1).describe() == "batchnorm x4");
  CHECK(a.get_params() == b.get_params());  // the same initialisation (relu's after the norm)
  auto xd = to_device(be, random_vector(size_t(6) * 144, 31, -1.f, 2.f));
  PassContext train;
  train.training = true;
  std::vector<float> got[2][4];
  Model* models[2] = {&a, &b};
  for (int k = 0; k < 2; ++k) {
    Model& m = *models[k];
    m.forward(6, xd.get(), train);
    const size_t nl = size_t(6) * m.classes();
    auto dl = to_device(be, random_vector(nl, 32));
    be.copy(m.dlogits(), dl.get(), nl * sizeof(float));
    DeviceArray<float> logits(be, nl);
    be.copy(logits.get(), m.logits(), nl * sizeof(float));
    got[k][0] = logits.download();
    m.backward(6);
    DeviceArray<float> g(be, m.param_count());
    be.copy(g.get(), m.grads(), m.param_count() * sizeof(float));
    got[k][1] = g.download();
    got[k][2] = m.get_state();
    m.forward(6, xd.get());  // inference: the running statistics
    be.copy(logits.get(), m.logits(), nl * sizeof(float));
    got[k][3] = logits.download();
  }
  // Serial computes the same float operations in the same order either way: equal to rounding.
  check_close("fused vs unfused training logits", got[0][0], got[1][0], 1e-6);
  check_close("fused vs unfused gradients", got[0][1], got[1][1], 1e-6);
  check_close("fused vs unfused running statistics", got[0][2], got[1][2], 1e-6);
  check_close("fused vs unfused inference logits", got[0][3], got[1][3], 1e-6);
}

TEST_CASE("batchnorm model files keep the running statistics: evaluation after loading is the same") {
  Backend& be = reference();
  const Dataset data = synthetic_dataset(48, 12, 12, 5), test = synthetic_dataset(40, 12, 12, 6);
  Model m(be, bn_spec(), 8, 42);
  Trainer t(be, m, data, kNorm, bn_config());
  t.train_epoch(0);
  const EvalResult before = evaluate(be, m, test, kNorm);
  SavedModel sm;
  sm.spec = bn_spec();
  sm.mean = kNorm.mean;
  sm.inv_std = kNorm.inv_std;
  sm.params = m.get_params();
  sm.state = m.get_state();
  const std::vector<float> fresh = initial_state(sm.spec);
  REQUIRE(sm.state.size() == fresh.size());
  CHECK(sm.state != fresh);  // training moved them
  const std::string p = scratch_path("bn.pcnn");
  save_model(p, sm);
  const SavedModel back = load_model(p);
  CHECK(back.state == sm.state);
  CHECK(back.params == sm.params);
  Model loaded(be, back.spec, 8, 0);
  loaded.set_params(back.params);
  loaded.set_state(back.state);
  const EvalResult after = evaluate(be, loaded, test, kNorm);
  CHECK(after.loss == before.loss);
  CHECK(after.accuracy == before.accuracy);
  // Without them (fresh statistics) the same weights evaluate differently: they matter.
  Model stateless(be, back.spec, 8, 0);
  stateless.set_params(back.params);
  CHECK(evaluate(be, stateless, test, kNorm).loss != before.loss);
  // The tensors under PyTorch's names.
  const std::string bytes = encode_model(sm);
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = header << 8 | uint8_t(bytes[size_t(i)]);
  const auto h = nlohmann::json::parse(bytes.substr(8, header));
  CHECK(h["layers.1.running_mean"]["shape"] == nlohmann::json{4});
  CHECK(h["layers.5.running_var"]["shape"] == nlohmann::json{16});
  CHECK(h["layers.1.weight"]["shape"] == nlohmann::json{4});
  sm.state.pop_back();
  PCNN_CHECK_REFUSED([&] { encode_model(sm); }, "the model has 39 state values, its spec needs 40");
}

}  // TEST_SUITE

TEST_SUITE("backend") {

TEST_CASE("batchnorm model: the loss curve, weights and running statistics match serial") {
  const TrainedRun want = train_bn(reference()), got = train_bn(backend());
  check_run_close("batchnorm model", got, want, kRunTol);
  // And it learns: the evaluation loss (running statistics) falls.
  CHECK(got.eval_losses[2] < 0.7 * got.eval_losses[0]);
}

TEST_CASE("batchnorm: a restored training state carries the running statistics") {
  const Dataset data = synthetic_dataset(48, 12, 12, 5);
  Model straight(backend(), bn_spec(), 8, 42);
  Trainer a(backend(), straight, data, kNorm, bn_config());
  for (int s = 0; s < 9; ++s) a.step();
  Model first(backend(), bn_spec(), 8, 42);
  Trainer b(backend(), first, data, kNorm, bn_config());
  for (int s = 0; s < 4; ++s) b.step();
  const TrainingState saved = b.state();
  CHECK(saved.state == first.get_state());
  Model second(backend(), bn_spec(), 8, 77);  // other weights and fresh statistics
  Trainer c(backend(), second, data, kNorm, bn_config());
  c.restore(saved);
  for (int s = 4; s < 9; ++s) c.step();
  CHECK(second.get_state() == straight.get_state());
  CHECK(second.get_params() == straight.get_params());
}

}  // TEST_SUITE

}  // namespace pcnn::test
