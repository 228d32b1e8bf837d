// 16-bit activation storage (core/precision.hpp): the conversions against a table of every
// 16-bit value, the loss scale's moves, the model's bytes, a bf16 / fp16 model against fp32 on
// serial, and on the backend under test 16-bit training against serial's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <tuple>
#include <utility>

#include "backends/serial/serial_backend.hpp"
#include "core/step_check_math.hpp"
#include "models/model.hpp"
#include "tests/harness.hpp"
#include "tests/synthetic.hpp"
#include "train/trainer.hpp"

namespace pcnn::test {

namespace {

// Every finite, non-negative value of a 16-bit format with its pattern, in increasing order
// (the patterns of non-negative values increase with the value in both formats).
std::vector<std::pair<double, uint16_t>> finite_values(Precision p) {
  std::vector<std::pair<double, uint16_t>> v;
  for (uint32_t h = 0; h < 0x8000u; ++h) {
    const float f = widen_from_storage(p, uint16_t(h));
    if (std::isfinite(f)) v.push_back({double(f), uint16_t(h)});
  }
  return v;
}

// Round to nearest, ties to the even pattern, by searching the table: no bit tricks. Past the
// largest value the next "value" is infinity's, one step of the top binade further.
uint16_t reference_round(Precision p, const std::vector<std::pair<double, uint16_t>>& table,
                         float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000u : 0u;
  const uint16_t inf = p == Precision::BF16 ? 0x7f80u : 0x7c00u;
  const double a = std::fabs(double(f));
  if (std::isinf(f)) return uint16_t(sign | inf);
  const auto hi = std::lower_bound(table.begin(), table.end(), std::make_pair(a, uint16_t(0)));
  if (hi != table.end() && hi->first == a) return uint16_t(sign | hi->second);
  const auto lo = hi - 1;  // a > 0 here, and table[0] is 0
  double hi_value;
  uint16_t hi_bits;
  if (hi == table.end()) {
    hi_value = lo->first + (lo->first - (lo - 1)->first);
    hi_bits = inf;
  } else {
    hi_value = hi->first;
    hi_bits = hi->second;
  }
  const double below = a - lo->first, above = hi_value - a;
  const uint16_t bits = below < above ? lo->second
                        : above < below ? hi_bits
                                        : ((lo->second & 1u) ? hi_bits : lo->second);
  return uint16_t(sign | bits);
}

// Floats for the rounding checks: every midpoint between neighbouring 16-bit values and the
// floats either side of it, and random floats over the whole exponent range.
std::vector<float> rounding_probes(const std::vector<std::pair<double, uint16_t>>& table) {
  std::vector<float> probes;
  for (size_t i = 0; i + 1 < table.size(); i += 1) {
    const float mid = float((table[i].first + table[i + 1].first) / 2);  // exact in float
    probes.push_back(mid);
    probes.push_back(std::nextafter(mid, 0.f));
    probes.push_back(std::nextafter(mid, INFINITY));
  }
  Rng rng(7);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t bits = uint32_t(rng.next_u64());
    const float f = bits_float(bits);
    if (!std::isnan(f)) probes.push_back(f);
  }
  return probes;
}

// LeNet-5: fused convolutions with max pooling, dense layers, a flatten view.
ModelSpec small_net() { return builtin_model("lenet5"); }

}  // namespace

TEST_SUITE("core") {

TEST_CASE("bf16 and fp16: every pattern widens exactly and rounds back to itself, NaN stays NaN") {
  for (Precision p : {Precision::BF16, Precision::F16}) {
    INFO(precision_name(p));
    int mismatches = 0, nans = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
      const float f = widen_from_storage(p, uint16_t(h));
      if (std::isnan(f)) {
        ++nans;
        mismatches += !std::isnan(widen_from_storage(p, round_to_storage(p, f)));
        continue;
      }
      mismatches += round_to_storage(p, f) != h;
    }
    CHECK(mismatches == 0);
    CHECK(nans == (p == Precision::BF16 ? 2 * 127 : 2 * 1023));
  }
  CHECK(f16_to_float(0x3c00) == 1.f);
  CHECK(f16_to_float(0x7bff) == 65504.f);
  CHECK(f16_to_float(0x0001) == std::ldexp(1.f, -24));
  CHECK(bf16_to_float(0x3f80) == 1.f);
  CHECK(bf16_to_float(0x7f7f) == 0x1.fep127f);
}

TEST_CASE("rounding to bf16 and fp16: nearest, ties to even, overflow to infinity, subnormals") {
  for (Precision p : {Precision::BF16, Precision::F16}) {
    INFO(precision_name(p));
    const auto table = finite_values(p);
    int mismatches = 0;
    float first_bad = 0;
    for (float f : rounding_probes(table)) {
      const uint16_t got = round_to_storage(p, f), want = reference_round(p, table, f);
      if (got != want && mismatches++ == 0) first_bad = f;
    }
    INFO("first mismatch at " << first_bad);
    CHECK(mismatches == 0);
  }
  // Spot values a reader can check by hand.
  CHECK(float_to_f16(65504.f) == 0x7bff);
  CHECK(float_to_f16(65519.f) == 0x7bff);
  CHECK(float_to_f16(65520.f) == 0x7c00);           // the tie past the top rounds to infinity
  CHECK(float_to_f16(std::ldexp(1.f, -25)) == 0);   // a tie between 0 and the least subnormal
  CHECK(float_to_f16(std::ldexp(3.f, -26)) == 1);   // above that tie
  CHECK(float_to_bf16(1.f + 1.f / 256) == 0x3f80);  // a tie: to the even 1.0
  CHECK(float_to_bf16(1.f + 3.f / 256) == 0x3f82);  // a tie: to the even 1 + 2/128
  CHECK(float_to_bf16(std::numeric_limits<float>::max()) == 0x7f80);
  CHECK(std::isnan(bf16_to_float(float_to_bf16(bits_float(0x7f800001u)))));  // a low payload
  // Every NaN, whatever its sign and payload (x86's 0/0 is 0xffc00000, a GPU's 0x7fffffff),
  // is stored as one pattern, so backends agree bit for bit on a non-finite step.
  for (uint32_t nan : {0x7f800001u, 0xffc00000u, 0x7fffffffu, 0xffffffffu}) {
    CHECK(float_to_bf16(bits_float(nan)) == 0x7fc0);
    CHECK(float_to_f16(bits_float(nan)) == 0x7e00);
  }
}

TEST_CASE("the loss scale: copied to the update's divisor, halved on a fault, doubled in time") {
  std::vector<float> hyper(kHyperCount, 0.f);
  hyper[kHyperLossScale] = 1024.f;
  update_loss_scale(true, hyper.data());  // static: only the divisor
  CHECK(hyper[kHyperGradUnscale] == 1.f / 1024);
  CHECK(hyper[kHyperLossScale] == 1024.f);
  hyper[kHyperScaleInterval] = 3.f;
  update_loss_scale(false, hyper.data());
  CHECK(hyper[kHyperGradUnscale] == 1.f / 1024);  // this step's divisor, before the move
  CHECK(hyper[kHyperLossScale] == 512.f);
  for (int i = 0; i < 2; ++i) update_loss_scale(true, hyper.data());
  CHECK(hyper[kHyperLossScale] == 512.f);
  CHECK(hyper[kHyperScaleGoodSteps] == 2.f);
  update_loss_scale(true, hyper.data());  // the third finite step in a row
  CHECK(hyper[kHyperLossScale] == 1024.f);
  CHECK(hyper[kHyperScaleGoodSteps] == 0.f);
  hyper[kHyperLossScale] = kMinLossScale;
  update_loss_scale(false, hyper.data());
  CHECK(hyper[kHyperLossScale] == kMinLossScale);
  hyper[kHyperLossScale] = kMaxLossScale;
  for (int i = 0; i < 3; ++i) update_loss_scale(true, hyper.data());
  CHECK(hyper[kHyperLossScale] == kMaxLossScale);
}

TEST_CASE("a 16-bit model keeps its layer outputs and gradients in half the bytes") {
  const auto layers = build_layers(fuse(small_net()));
  const ActivationBytes f32 = activation_bytes(layers);
  const ActivationBytes b16 = activation_bytes(layers, Precision::BF16);
  CHECK(b16.outputs * 2 == f32.outputs);
  CHECK(b16.gradients * 2 == f32.gradients);
  CHECK(b16.kept == f32.kept);            // argmax bytes, whatever the precision
  CHECK(b16.workspace == f32.workspace);  // the fp32 pass's own scratch
  CHECK(f32.conversion == 0);
  CHECK(b16.conversion > 0);
  CHECK(activation_bytes_per_image(small_net(), true, Precision::F16) == b16.total());
}

TEST_CASE("16-bit staging: only the layers whose op the backend stages for count it") {
  const ModelSpec spec = load_model_spec("lenet5");
  const auto layers = build_layers(fuse(spec));
  const size_t logits = 10;
  REQUIRE(first_reads_fp32(layers));
  const auto staging_bytes = [&](const Staging16& st) {
    // No rounded input: conv1 reads the fp32 input as given (first_reads_fp32).
    return activation_bytes(layers, Precision::BF16, st).conversion -
           2 * logits * sizeof(float);  // fp32 logits and their gradient (the loss's staging)
  };
  // The composed defaults: conv1's x (784), y (6x14x14) and their gradients, widened.
  CHECK(staging_bytes({}) == 2 * (784 + 1176) * sizeof(float));
  CHECK(staging_bytes({true, false}) == 2 * (784 + 1176) * sizeof(float));
  // Dense layers staged, convolutions native: fc1's 400 inputs and 120 outputs.
  CHECK(staging_bytes({false, true}) == 2 * (400 + 120) * sizeof(float));
  CHECK(staging_bytes({false, false}) == 0);  // every op native (the cuda backend)
  CHECK(activation_bytes_per_image(spec, true, Precision::BF16, {false, false}) + 15680 ==
        activation_bytes_per_image(spec, true, Precision::BF16));
}

TEST_CASE("a 16-bit model's first convolution reads the fp32 input; a dense one gets it rounded") {
  SerialBackend be;
  const int N = 4;
  Rng rng(5);
  std::vector<float> x(size_t(N) * 28 * 28), rounded(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = float(rng.uniform() * 4 - 2);
    rounded[i] = bf16_to_float(float_to_bf16(x[i]));
  }
  const auto logits = [&](const ModelSpec& spec, const std::vector<float>& in) {
    Model m(be, spec, N, 7, true, Precision::BF16);
    m.forward(N, in.data());
    return std::vector<float>(m.logits(), m.logits() + N * 10);
  };
  // Inputs that bf16 cannot hold: conv1 sees them as they are, so rounding them first changes
  // the logits; the mlp's first layer (a view, then a dense layer) sees them rounded either way.
  const ModelSpec lenet = builtin_model("lenet5"), mlp = builtin_model("mlp");
  CHECK(first_reads_fp32(build_layers(fuse(lenet))));
  CHECK_FALSE(first_reads_fp32(build_layers(fuse(mlp))));
  CHECK(logits(lenet, x) != logits(lenet, rounded));
  CHECK(logits(mlp, x) == logits(mlp, rounded));
}

TEST_CASE("bf16 and fp16 models on serial: logits and gradients near fp32's") {
  SerialBackend be;
  const ModelSpec spec = small_net();
  const int N = 8;
  Rng rng(3);
  std::vector<float> x(size_t(N) * 32 * 32);
  for (auto& v : x) v = float(rng.uniform() * 4 - 2);
  std::vector<int32_t> labels(N);
  for (auto& l : labels) l = int32_t(rng.next_u64() % 10);
  struct Pass {
    std::vector<float> logits, grads;
    float loss = 0;
  };
  const auto run = [&](Precision p) {
    Model m(be, spec, N, 11, true, p);
    m.forward(N, x.data(), PassContext{true, nullptr, 0});
    Pass r;
    float metrics[2] = {0, 0};
    m.loss_and_gradient(N, labels.data(), metrics);  // 16-bit: softmax_cross_entropy_16
    r.logits.assign(m.logits(), m.logits() + N * 10);
    r.loss = metrics[0];
    m.backward_layers(N);
    r.grads = std::vector<float>(m.grads(), m.grads() + m.param_count());
    return r;
  };
  const Pass f32 = run(Precision::F32);
  for (Precision p : {Precision::BF16, Precision::F16}) {
    INFO(precision_name(p));
    const Pass got = run(p);
    // bf16 keeps 8 significant bits (a relative step of 2^-8 = 0.4 %) at each of ~6 storage
    // points; fp16 keeps 11. A missing or misplaced conversion is off by O(1).
    const double tol = p == Precision::BF16 ? 3e-2 : 5e-3;
    check_close("logits", got.logits, f32.logits, tol);
    check_close("parameter gradients", got.grads, f32.grads, 2 * tol);
    CHECK(std::fabs(got.loss - f32.loss) <= tol * std::fabs(f32.loss));
    CHECK(got.logits != f32.logits);  // something was rounded
  }
}

TEST_CASE("fp16 with SGD: the update divides the loss scale back out of the gradients") {
  // Adam would hide a scale left in (its step does not depend on the gradients' size); SGD's
  // step is proportional to it, so a gradient 32768 times too large is plain to see.
  SerialBackend be;
  const Dataset data = synthetic_dataset(64, 28, 28, 5);
  TrainConfig cfg = adam_config(16, 9, 0.02f);
  cfg.optimizer.kind = "sgd";
  const auto train = [&](Precision p) {
    Model m(be, builtin_model("lenet5"), 16, 8, true, p);
    Trainer t(be, m, data, Normalization{0.2f, 3.f}, cfg);
    t.train_epoch(0);
    return m.get_params();
  };
  const std::vector<float> f32 = train(Precision::F32), f16 = train(Precision::F16);
  check_close("parameters after an epoch of SGD, fp16 against fp32", f16, f32, 5e-3);
}

TEST_CASE("fp16 training: the loss scale is checkpointed and a restored run goes on bit for bit") {
  SerialBackend be;
  const Dataset data = synthetic_dataset(64, 28, 28, 5);
  const ModelSpec spec = builtin_model("lenet5");
  const TrainConfig cfg = adam_config(16, 9, 2e-3f);  // 4 steps an epoch
  const auto make = [&](Model& m) {
    return std::make_unique<Trainer>(be, m, data, Normalization{0.2f, 3.f}, cfg);
  };
  Model whole_model(be, spec, 16, 8, true, Precision::F16);
  auto whole = make(whole_model);
  whole->train_epoch(0);
  for (int s = 0; s < 2; ++s) whole->step();
  const TrainingState mid = whole->state();
  REQUIRE(mid.loss_scale.size() == 2);
  CHECK(mid.loss_scale[0] <= kInitialLossScale);
  CHECK(mid.loss_scale[1] >= 0.f);
  for (int s = 0; s < 2; ++s) whole->step();
  Model resumed_model(be, spec, 16, 8, true, Precision::F16);
  auto resumed = make(resumed_model);
  resumed->restore(mid);
  // the rest of epoch 1 from the restored state: the same weights, and the same count of
  // finite steps toward the scale's next doubling (8, not the 2 a fresh scale would have)
  const EpochStats a = resumed->train_epoch(1);
  CHECK(std::isfinite(a.train_loss));
  CHECK(resumed_model.get_params() == whole_model.get_params());
  CHECK(resumed->state().loss_scale == whole->state().loss_scale);
}

}  // TEST_SUITE

TEST_SUITE("backend") {

TEST_CASE("16-bit training: the backend follows serial's run, and learns what fp32 learns") {
  const Dataset data = synthetic_dataset(96, 28, 28, 31);
  const ModelSpec spec = builtin_model("lenet5");
  const auto train = [&](Backend& be, Precision p) {
    const TrainConfig cfg = adam_config(16, 7, 2e-3f);  // 6 steps an epoch
    Model m(be, spec, 16, 8, true, p);
    Trainer t(be, m, data, kSyntheticNorm, cfg);
    std::vector<double> losses;
    for (int e = 0; e < 3; ++e) losses.push_back(t.train_epoch(e).train_loss);
    const EvalResult ev = evaluate(be, m, data, kSyntheticNorm);
    return std::make_tuple(losses, m.get_params(), ev);
  };
  const auto [f32_losses, f32_params, f32_eval] = train(reference(), Precision::F32);
  for (Precision p : {Precision::BF16, Precision::F16}) {
    INFO(precision_name(p) << " on " << backend_name());
    const auto [want_losses, want_params, want_eval] = train(reference(), p);
    const auto [losses, params, ev] = train(backend(), p);
    // Another summation order moves an fp32 result by an ulp or so, and a value on a rounding
    // boundary then stores one 16-bit step apart (0.4 % in bf16); three epochs carry that
    // along. A broken conversion or a 16-bit pass that skips a layer is off by far more.
    check_close("parameters after three epochs", params, want_params, 2e-2);
    for (size_t e = 0; e < losses.size(); ++e) {
      INFO("epoch " << e + 1 << ": " << losses[e] << " vs serial's " << want_losses[e]
                    << " (fp32: " << f32_losses[e] << ")");
      CHECK(std::isfinite(losses[e]));
      CHECK(std::fabs(losses[e] - want_losses[e]) <= 0.05 * std::fabs(want_losses[e]) + 1e-3);
      CHECK(std::fabs(losses[e] - f32_losses[e]) <= 0.15 * std::fabs(f32_losses[e]) + 1e-2);
    }
    CHECK(losses.back() < 0.6 * losses.front());  // it learns
    CHECK(std::fabs(ev.accuracy - f32_eval.accuracy) <= 0.1);
  }
}

}  // TEST_SUITE

}  // namespace pcnn::test
