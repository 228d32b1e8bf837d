// Dropout, global average pooling and padded pools (issue 15): the spec's JSON round trip and
// fusion, the layers as built, the dropout mask (seeded, the same on every backend, new each
// step, keeping about 1 - rate), and a model using all three training on each backend with
// serial's loss curve.
//
// Tolerances: masks are integer hashes, so dropout outputs are compared bit for bit; whole
// training runs use test_models.cpp's 1e-4 (fp32 sums in another order, carried over steps).
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/dropout_math.hpp"
#include "models/model.hpp"
#include "tests/harness.hpp"
#include "tests/synthetic.hpp"
#include "train/trainer.hpp"

namespace pcnn::test {

namespace {

// 1x28x28 -> conv 3x3 pad 1 -> padded 3/2 max pool (14x14) -> conv 3x3 -> padded 2/2 avg pool
// (7x7) -> dropout -> global average pool (8) -> flatten -> dense -> dropout -> dense 10 (the
// synthetic data's classes).
constexpr const char* kSpec = R"({
  "name": "regularised", "input": [1, 28, 28], "classes": 10,
  "layers": [
    {"type": "conv", "units": 6, "kernel": 3, "pad": 1, "act": "relu"},
    {"type": "maxpool", "kernel": 3, "stride": 2, "pad": 1},
    {"type": "conv", "units": 8, "kernel": 3, "act": "relu"},
    {"type": "avgpool", "kernel": 2, "pad": 1},
    {"type": "dropout", "rate": 0.25},
    {"type": "globalavgpool"},
    {"type": "flatten"},
    {"type": "dense", "units": 16, "act": "relu"},
    {"type": "dropout"},
    {"type": "dense", "units": 10}
  ]})";

ModelSpec regularised() { return model_spec_from_json(nlohmann::json::parse(kSpec)); }

// The fraction of n elements that are kept.
double kept_fraction(const std::vector<float>& y) {
  size_t kept = 0;
  for (float v : y) kept += v != 0.f;
  return double(kept) / double(y.size());
}

// dropout_forward of x on be at `step`.
std::vector<float> dropped(Backend& be, const std::vector<float>& x, float rate, uint32_t seed,
                           uint32_t salt, int32_t step) {
  auto xd = to_device(be, x);
  auto sd = to_device(be, std::vector<int32_t>{step});
  DeviceArray<float> y(be, x.size());
  be.dropout_forward(x.size(), rate, seed, salt, sd.get(), xd.get(), y.get());
  return y.download();
}

// 3 epochs of regularised() on 64 synthetic 28x28 images, by Adam.
TrainedRun train(Backend& be) {
  return train_run(be, regularised(), 17, synthetic_dataset(64, 28, 28, 21),
                   adam_config(8, 5, 3e-3f), 3);
}
}  // namespace

TEST_SUITE("core") {

TEST_CASE("dropout, globalavgpool and pool pad: JSON round trip, defaults, fusion, layers") {
  const ModelSpec s = regularised();
  CHECK(s.layers[1].pad == 1);
  CHECK(s.layers[4].rate == 0.25);
  CHECK(s.layers[8].rate == 0.5);  // the default
  const nlohmann::json j = to_json(s);
  CHECK(j["layers"][1]["pad"] == 1);
  CHECK(j["layers"][4]["rate"] == 0.25);
  CHECK_FALSE(j["layers"][8].contains("rate"));  // defaults are not written
  CHECK_FALSE(j["layers"][5].contains("kernel"));
  CHECK(to_json(model_spec_from_json(j)) == j);
  // A padded pool stays a layer of its own; an unpadded one after a conv is fused.
  const ModelSpec f = fuse(s);
  REQUIRE(f.layers.size() == s.layers.size());
  CHECK(f.layers[0].pool == "none");
  ModelSpec unpadded = s;
  unpadded.layers[1].pad = 0;
  CHECK(fuse(unpadded).layers[0].pool == "maxpool");
  // The layers as built: shapes, names, FLOPs (one per input element for the new ones).
  const auto layers = build_layers(f);
  CHECK(layers[1]->describe() == "maxpool 3 stride 2 pad 1");
  CHECK(layers[1]->output_shape().h == 14);
  CHECK(layers[3]->output_shape().h == 7);  // (12 + 2 - 2) / 2 + 1
  CHECK(layers[4]->describe() == "dropout 0.25");
  CHECK(layers[5]->describe() == "globalavgpool");
  CHECK(layers[5]->output_shape().c == 8);
  CHECK(layers[5]->output_shape().h * layers[5]->output_shape().w == 1);
  CHECK(layers[5]->forward_flops(1) == 8 * 7 * 7);
  CHECK(layers[4]->forward_flops(2) == 2 * 8 * 7 * 7);
  CHECK(layer_activation_bytes(*layers[4]) == 4 * 8 * 7 * 7);  // its output; it keeps no mask
  CHECK(layers[4]->workspace_floats_per_sample() == 0);
}

TEST_CASE("the dropout hash: about 1 - rate kept, another step, salt or seed another mask") {
  const size_t n = 200000;
  for (float rate : {0.f, 0.1f, 0.5f, 0.9f}) {
    const uint32_t th = dropout_threshold(rate);
    size_t kept = 0, same_step = 0, same_salt = 0, same_seed = 0;
    const uint64_t key = dropout_key(7, 1, 100);
    for (size_t i = 0; i < n; ++i) {
      const bool k = dropout_keep(key, i, th);
      kept += k;
      same_step += k == dropout_keep(dropout_key(7, 1, 101), i, th);
      same_salt += k == dropout_keep(dropout_key(7, 2, 100), i, th);
      same_seed += k == dropout_keep(dropout_key(8, 1, 100), i, th);
    }
    const double p = 1.0 - rate, sigma = std::sqrt(p * (1 - p) / double(n));
    INFO("rate " << rate << ": kept " << kept);
    // 6 sigma: a sound hash never fails this, a biased one (a bit stuck) does.
    CHECK(std::fabs(double(kept) / n - p) <= 6 * sigma + 1e-9);
    // Two independent masks agree on p^2 + (1-p)^2 of the elements.
    const double agree = p * p + (1 - p) * (1 - p);
    for (size_t same : {same_step, same_salt, same_seed})
      CHECK(std::fabs(double(same) / n - agree) <= 6 * std::sqrt(agree * (1 - agree) / n) + 1e-9);
  }
  CHECK(dropout_scale(0.25f) == 1.f / 0.75f);
}

}  // TEST_SUITE

TEST_SUITE("backend") {

TEST_CASE("dropout: serial's mask bit for bit at the same step, another at the next") {
  const std::vector<float> x = random_vector(100003, 31, 0.5f, 2.f);  // never 0
  for (float rate : {0.2f, 0.5f}) {
    const auto want = dropped(reference(), x, rate, 9, 3, 41);
    const auto got = dropped(backend(), x, rate, 9, 3, 41);
    check_close("dropout rate " + std::to_string(rate) + " step 41", got, want, 0.0);
    const auto next = dropped(backend(), x, rate, 9, 3, 42);
    size_t differ = 0;
    for (size_t i = 0; i < x.size(); ++i) differ += (next[i] != 0.f) != (got[i] != 0.f);
    const double p = 1.0 - rate;
    INFO("rate " << rate << ": masks of steps 41 and 42 differ in " << differ);
    CHECK(double(differ) / x.size() > 0.8 * 2 * p * (1 - p));
    CHECK(std::fabs(kept_fraction(got) - p) < 0.01);
    // Kept elements are x / (1 - rate), exactly as the host computes it.
    for (size_t i = 0; i < x.size(); i += 997)
      if (got[i] != 0.f) CHECK(got[i] == x[i] * dropout_scale(rate));
    // The backward draws the same mask again.
    auto dy = to_device(backend(), x);
    auto step = to_device(backend(), std::vector<int32_t>{41});
    DeviceArray<float> dx(backend(), x.size());
    backend().dropout_backward(x.size(), rate, 9, 3, step.get(), dy.get(), dx.get());
    check_close("dropout backward = forward mask", dx.download(), got, 0.0);
  }
}

TEST_CASE("a model with dropout, globalavgpool and padded pools trains like serial") {
  const TrainedRun want = train(reference()), got = train(backend());
  const std::vector<double>& g = got.train_losses;
  const std::vector<double>& w = want.train_losses;
  MESSAGE(backend_name() << " loss per epoch: " << g[0] << " " << g[1] << " " << g[2]
                         << " (serial " << w[0] << " " << w[1] << " " << w[2] << ")");
  check_run_close("regularised model", got, want, 1e-4);
  CHECK(w.back() < w.front());  // it learns
}

TEST_CASE("inference through dropout is deterministic and the identity") {
  Backend& be = backend();
  ModelSpec plain = regularised();
  // The same model without its dropout layers: the same parameters (dropout has none).
  plain.layers.erase(plain.layers.begin() + 8);
  plain.layers.erase(plain.layers.begin() + 4);
  Model m(be, regularised(), 4, 3), p(be, plain, 4, 3);
  REQUIRE(m.get_params() == p.get_params());
  auto x = to_device(be, random_vector(size_t(4) * m.input_shape().size(), 77));
  auto logits = [&](Model& model) {
    model.forward(4, x.get());
    DeviceArray<float> l(be, size_t(4) * model.classes());
    be.copy(l.get(), model.logits(), l.size() * sizeof(float));
    return l.download();
  };
  const auto a = logits(m), b = logits(m), c = logits(p);
  check_close("two inference passes", a, b, 0.0);
  check_close("with and without dropout layers", a, c, 0.0);
}

}  // TEST_SUITE

}  // namespace pcnn::test

