// Initial weights of conv and dense layers, for every activation that may follow them, against the
// formulas: Kaiming-normal std sqrt(2 / fan_in) (He et al. 2015), Xavier-uniform on
// +-sqrt(6 / (fan_in + fan_out)), std sqrt(2 / (fan_in + fan_out)) (Glorot & Bengio 2010).
// The layers' fans differ by 2.6x and 4x, so a gain of 1 for 2 (std off by sqrt 2), fans swapped,
// or the other distribution fails by far more than the sampling error (under 1% here).
#include <algorithm>
#include <cmath>

#include "core/vocabulary.hpp"
#include "models/model.hpp"
#include "tests/harness.hpp"

namespace pcnn::test {

namespace {

struct Stats {
  double mean = 0, std = 0, max_abs = 0, within_one_std = 0;  // the last: a fraction
};

Stats stats_of(const float* w, size_t n) {
  Stats s;
  for (size_t i = 0; i < n; ++i) s.mean += w[i];
  s.mean /= double(n);
  for (size_t i = 0; i < n; ++i) s.std += (w[i] - s.mean) * (w[i] - s.mean);
  s.std = std::sqrt(s.std / double(n));
  for (size_t i = 0; i < n; ++i) {
    s.max_abs = std::max(s.max_abs, std::fabs(double(w[i])));
    s.within_one_std += std::fabs(w[i] - s.mean) <= s.std;
  }
  s.within_one_std /= double(n);
  return s;
}

struct Probe {
  const char* what;
  ModelSpec spec;  // its first layer is the one probed
  int fan_in, fan_out;
};

// The probed layer first, with activation `act` fused (or as a layer of its own after it).
Probe dense_probe(Activation act, bool separate) {
  ModelSpec s;
  s.name = "dense-probe";
  s.in_c = 1; s.in_h = 1; s.in_w = 784;
  LayerSpec d;
  d.type = "dense"; d.units = 300;
  if (separate) {
    s.layers.push_back(d);
    if (act != Activation::None) s.layers.push_back(LayerSpec{activation_name(act)});
  } else {
    d.act = activation_name(act);
    s.layers.push_back(d);
  }
  LayerSpec logits;
  logits.type = "dense"; logits.units = 10;
  s.layers.push_back(logits);
  return {"dense 784->300", s, 784, 300};
}

Probe conv_probe(Activation act) {
  ModelSpec s;
  s.name = "conv-probe";
  s.in_c = 16; s.in_h = 12; s.in_w = 12;
  LayerSpec c;
  c.type = "conv"; c.units = 64; c.kernel = 3; c.act = activation_name(act);
  LayerSpec logits;
  logits.type = "dense"; logits.units = 10;
  s.layers = {c, LayerSpec{"flatten"}, logits};
  return {"conv 3x3 16->64 maps", s, 16 * 9, 64 * 9};  // Glorot's conv fans: C*R*S and K*R*S
}

void check_init(const Probe& p, Activation act) {
  const InitKind kind = preferred_init(act);
  const bool kaiming = kind == InitKind::Kaiming;
  INFO(std::string(p.what) << " + " << std::string(activation_name(act)) << ": "
              << (kaiming ? "Kaiming-normal" : "Xavier-uniform") << ", fan_in " << p.fan_in
              << ", fan_out " << p.fan_out);
  const std::vector<float> params = initial_params(p.spec, 17);
  const size_t n = size_t(p.fan_in) * (p.spec.layers[0].units);
  REQUIRE(params.size() > n + size_t(p.spec.layers[0].units));
  const Stats s = stats_of(params.data(), n);
  const double want_std = kaiming ? std::sqrt(2.0 / p.fan_in) : std::sqrt(2.0 / (p.fan_in + p.fan_out));
  INFO(n << " weights: mean " << s.mean << ", std " << s.std << " (formula " << want_std
         << "), max |w| " << s.max_abs << ", within one std " << s.within_one_std);
  // Sampling error of the std: 1/sqrt(2n) < 0.8% for these layers; 4% is five of those.
  // (scale(0): relative to the value alone; doctest's default adds 1 to the scale, which would
  // let a std of 0.08 pass for 0.12.)
  CHECK(s.std == doctest::Approx(want_std).epsilon(0.04).scale(0));
  CHECK(std::fabs(s.mean) < 5 * want_std / std::sqrt(double(n)));
  if (kaiming) {
    // Normal: 68.3% within one std, and tails past 3 std among thousands of draws.
    CHECK(s.within_one_std == doctest::Approx(0.683).epsilon(0.03).scale(0));
    CHECK(s.max_abs > 3 * want_std);
  } else {
    // Uniform on +-limit: 57.7% (1/sqrt 3) within one std, nothing past the limit.
    const double limit = std::sqrt(6.0 / (p.fan_in + p.fan_out));
    CHECK(s.within_one_std == doctest::Approx(0.577).epsilon(0.03).scale(0));
    CHECK(s.max_abs <= limit * (1 + 1e-6));
    CHECK(s.max_abs > 0.99 * limit);
  }
  for (int k = 0; k < p.spec.layers[0].units; ++k) CHECK(params[n + size_t(k)] == 0.f);  // biases
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("weight initialisation: rectifiers get Kaiming, saturating functions Xavier") {
  CHECK(preferred_init(Activation::ReLU) == InitKind::Kaiming);
  CHECK(preferred_init(Activation::ELU) == InitKind::Kaiming);
  CHECK(preferred_init(Activation::Tanh) == InitKind::Xavier);
  CHECK(preferred_init(Activation::Sigmoid) == InitKind::Xavier);
  CHECK(preferred_init(Activation::None) == InitKind::Xavier);
}

TEST_CASE("weight initialisation: dense layers, mean and std against the formula per activation") {
  for (Activation act : all_activations()) {
    check_init(dense_probe(act, false), act);
    check_init(dense_probe(act, true), act);  // the activation as a layer of its own
  }
}

TEST_CASE("weight initialisation: conv layers, mean and std against the formula per activation") {
  for (Activation act : all_activations()) check_init(conv_probe(act), act);
}

}  // TEST_SUITE

}  // namespace pcnn::test
