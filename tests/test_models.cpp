// Whole models on the backend under test: training steps match serial tensor by tensor, fused
// and unfused models agree, and a short run learns.
//
// Tolerance for parameters after a few SGD/Adam steps: 1e-4 normalised — each step's fp32
// differences (~1e-6) are carried and slightly amplified by later steps; a wrong kernel is off
// by far more (> 1e-2).
#include <nlohmann/json.hpp>

#include "backends/registry.hpp"
#include "core/check.hpp"
#include "models/model.hpp"
#include "models/model_spec.hpp"
#include "tests/harness.hpp"
#include "tests/synthetic.hpp"
#include "train/trainer.hpp"

namespace pcnn::test {

namespace {
constexpr double kStepTol = 1e-4;

struct StepResult {
  std::vector<float> params, grads, logits;
  double train_loss = 0;
};

StepResult train_steps(Backend& be, const std::string& model, const std::string& opt, int steps) {
  ModelSpec spec = builtin_model(model);
  const Dataset data = synthetic_dataset(48, 28, 28, 5);
  Model m(be, spec, 8, 42);
  TrainConfig cfg;
  cfg.batch = 8;
  cfg.seed = 3;
  cfg.optimizer.kind = opt;
  cfg.optimizer.lr = opt == "adam" ? 1e-3f : 0.05f;
  cfg.optimizer.weight_decay = 1e-4f;
  Trainer t(be, m, data, {0.2f, 3.f}, cfg);
  for (int s = 0; s < steps; ++s) t.step();  // step 2 is captured, later ones replayed (GPU)
  StepResult r;
  r.params = m.get_params();
  DeviceArray<float> g(be, m.param_count());
  be.copy(g.get(), m.grads(), m.param_count() * sizeof(float));
  r.grads = g.download();
  const EvalResult e = evaluate(be, m, data, {0.2f, 3.f});
  r.train_loss = e.loss;
  return r;
}
}  // namespace

TEST_SUITE("backend") {

TEST_CASE("training steps match serial: every model, sgd and adam") {
  for (const std::string model : {"lenet5", "simard2003", "mlp"})
    for (const std::string opt : {"sgd", "adam"}) {
      const StepResult want = train_steps(reference(), model, opt, 4);
      const StepResult got = train_steps(backend(), model, opt, 4);
      check_close(model + " " + opt + " parameters after 4 steps", got.params, want.params, kStepTol);
      check_close(model + " " + opt + " gradients of step 4", got.grads, want.grads, kStepTol);
      INFO(model << " " << opt << " loss after 4 steps: " << got.train_loss << " vs serial "
                 << want.train_loss);
      CHECK(std::fabs(got.train_loss - want.train_loss) <= 1e-4 * std::fabs(want.train_loss) + 1e-5);
    }
}

TEST_CASE("fused and unfused models compute the same logits and gradients") {
  Backend& be = backend();
  for (const std::string name : {"lenet5", "simard2003", "mlp"}) {
    const ModelSpec spec = builtin_model(name);
    Model fused(be, spec, 5, 9, true), plain(be, spec, 5, 9, false);
    CHECK(fused.layer_count() < plain.layer_count());
    const auto x = random_vector(size_t(5) * fused.input_shape().size(), 200);
    auto xd = to_device(be, x);
    std::vector<std::vector<float>> out[2];
    Model* models[2] = {&fused, &plain};
    for (int k = 0; k < 2; ++k) {
      Model& m = *models[k];
      m.forward(5, xd.get());
      auto dl = to_device(be, random_vector(size_t(5) * m.classes(), 201));
      be.copy(m.dlogits(), dl.get(), dl.size() * sizeof(float));
      DeviceArray<float> logits(be, dl.size());
      be.copy(logits.get(), m.logits(), dl.size() * sizeof(float));
      m.backward(5);
      DeviceArray<float> g(be, m.param_count());
      be.copy(g.get(), m.grads(), m.param_count() * sizeof(float));
      out[k] = {logits.download(), g.download()};
    }
    check_close(name + " fused vs unfused logits", out[0][0], out[1][0], 1e-5);
    check_close(name + " fused vs unfused gradients", out[0][1], out[1][1], 1e-5);
  }
}

TEST_CASE("a short training run reduces the loss and learns") {
  Backend& be = backend();
  const Dataset train = synthetic_dataset(640, 28, 28, 11), test = synthetic_dataset(200, 28, 28, 12);
  Model m(be, builtin_model("lenet5"), 32, 4);
  TrainConfig cfg;
  cfg.batch = 32;
  cfg.optimizer.lr = 0.02f;
  Trainer t(be, m, train, {0.2f, 3.f}, cfg);
  const double before = evaluate(be, m, test, {0.2f, 3.f}).loss;
  EpochStats last;
  for (int e = 0; e < 3; ++e) last = t.train_epoch(e);
  const EvalResult after = evaluate(be, m, test, {0.2f, 3.f});
  INFO("backend " << backend_name() << ": test loss " << before << " -> " << after.loss
                  << ", accuracy " << after.accuracy << ", last train loss " << last.train_loss);
  CHECK(after.loss < 0.5 * before);
  CHECK(after.accuracy > 0.8);
  CHECK(last.images_per_s > 0);
}

TEST_CASE("an evaluator kept across epochs counts what a fresh evaluation counts") {
  Backend& be = backend();
  const Dataset train = synthetic_dataset(128, 28, 28, 14),
                test = synthetic_dataset(70, 28, 28, 15);
  Model m(be, builtin_model("lenet5"), 32, 4);  // 70 test images: two full batches and a part
  TrainConfig cfg;
  cfg.batch = 32;
  cfg.optimizer.lr = 0.02f;
  Trainer t(be, m, train, kSyntheticNorm, cfg);
  Evaluator kept(be, m, test, kSyntheticNorm);
  for (int e = 0; e < 2; ++e) {
    const EvalResult fresh = evaluate(be, m, test, kSyntheticNorm), again = kept.run(m);
    CHECK(again.count == 70);
    CHECK(again.accuracy == fresh.accuracy);  // the same kernels on the same data: the same bits
    CHECK(again.loss == fresh.loss);
    t.train_epoch(e);  // the next round sees other weights
  }
  Model other(be, builtin_model("lenet5"), 16, 4);  // smaller batches than the evaluator's
  CHECK_THROWS_WITH_AS(kept.run(other), doctest::Contains("does not take the batches"), Error);
}

TEST_CASE("learning-rate schedules: exp decays by a factor, cosine runs toward 0 over the epochs") {
  Backend& be = backend();
  const Dataset train = synthetic_dataset(64, 28, 28, 13);
  Model m(be, builtin_model("lenet5"), 32, 4);
  TrainConfig cfg;
  cfg.batch = 32;
  cfg.epochs = 4;
  cfg.optimizer.lr = 0.01f;
  cfg.lr_decay = 0.5f;
  const Trainer exp_t(be, m, train, {0.2f, 3.f}, cfg);
  CHECK(exp_t.learning_rate(0) == doctest::Approx(0.01));
  CHECK(exp_t.learning_rate(1) == doctest::Approx(0.005));
  CHECK(exp_t.learning_rate(3) == doctest::Approx(0.00125));
  cfg.lr_schedule = LrSchedule::Cosine;  // lr_decay no longer used
  Trainer cos_t(be, m, train, {0.2f, 3.f}, cfg);
  // (1 + cos(pi e / 4)) / 2 for e = 0..3: 1, 0.8536, 0.5, 0.1464
  const double want[] = {0.01, 0.0085355339, 0.005, 0.0014644661};
  for (int e = 0; e < 4; ++e) CHECK(cos_t.learning_rate(e) == doctest::Approx(want[e]));
  // The epoch trains with the schedule's rate, and reports it.
  CHECK(cos_t.train_epoch(0).learning_rate == doctest::Approx(want[0]));
  CHECK(cos_t.train_epoch(1).learning_rate == doctest::Approx(want[1]));
  cfg.epochs = 0;
  CHECK_THROWS_WITH_AS(Trainer(be, m, train, {0.2f, 3.f}, cfg),
                       doctest::Contains("cosine learning-rate schedule needs"), Error);
}

}  // TEST_SUITE

}  // namespace pcnn::test

namespace pcnn::test {

TEST_SUITE("backend") {

TEST_CASE("data parallel: R replicas train exactly like one device, weights stay identical") {
  const Dataset data = synthetic_dataset(72, 28, 28, 21);
  const ModelSpec spec = builtin_model("lenet5");
  const TrainConfig cfg = adam_config(12, 5, 2e-3f);

  Model single(backend(), spec, 12, 8);
  Trainer one(backend(), single, data, kSyntheticNorm, cfg);
  const int steps = 7;  // crosses into the second epoch (6 steps each)
  for (int s = 0; s < steps; ++s) one.step();
  const auto want = single.get_params();

  // The backend's own collective (NCCL on cuda) on one replica: the same path, one rank.
  {
    Model m(backend(), spec, 12, 8);
    std::vector<Backend*> bes{&backend()};
    auto coll = make_collective(backend_name(), bes);
    INFO("collective " << coll->name());
    std::vector<Model*> ms{&m};
    Trainer t(bes, ms, coll.get(), data, kSyntheticNorm, cfg);
    for (int s = 0; s < steps; ++s) t.step();
    check_close("one replica through the " + coll->name() + " all-reduce", m.get_params(), want,
                kStepTol);
  }
  for (int R : {2, 3}) {
    std::vector<std::unique_ptr<Backend>> owned;
    std::vector<std::unique_ptr<Model>> models;
    std::vector<Backend*> bes;
    std::vector<Model*> ms;
    BackendOptions opts;
    opts.threads = 2;
    for (int r = 0; r < R; ++r) {
      owned.push_back(make_backend(backend_name(), opts));
      models.push_back(std::make_unique<Model>(*owned.back(), spec, 12 / R, 8));
      bes.push_back(owned.back().get());
      ms.push_back(models.back().get());
    }
    auto coll = make_collective(backend_name(), bes, "host");
    Trainer dp(bes, ms, coll.get(), data, kSyntheticNorm, cfg);
    for (int s = 0; s < steps; ++s) dp.step();
    const auto first = ms[0]->get_params();
    for (int r = 1; r < R; ++r) CHECK(ms[r]->get_params() == first);  // bit for bit
    check_close("data parallel over " + std::to_string(R) + " replicas vs one device", first,
                want, kStepTol);
  }
}

TEST_CASE("data parallel with dropout and batchnorm: replica r at step s is one device's step s*R+r") {
  // Replica r's step counter is s*R + r: it gathers shard r of global batch s, draws dropout
  // masks keyed by that counter over its own shard's elements, and normalises with its shard's
  // batch statistics. One device with the shard's batch size (b = B/R) takes the same images at
  // its step s*R + r, so with the weights held still (SGD, lr 1e-30: zero is refused, and this
  // moves only the zero biases, by ~1e-30) the all-reduced gradient of step
  // s is the mean of that device's gradients at steps s*R .. s*R + R-1. The running statistics
  // are each replica's own.
  const ModelSpec spec = model_spec_from_json(nlohmann::json::parse(R"({"name": "dp_regular",
    "input": [1, 8, 8], "classes": 10, "layers": [{"type": "conv", "units": 3, "kernel": 3},
    {"type": "batchnorm"}, {"type": "relu"}, {"type": "dropout", "rate": 0.5}, {"type": "flatten"},
    {"type": "dense", "units": 10}]})"));
  const Dataset data = synthetic_dataset(48, 8, 8, 41);
  const int R = 2, B = 8, b = B / R, steps = 3;
  TrainConfig cfg;
  cfg.seed = 6;
  cfg.optimizer.kind = "sgd";
  cfg.optimizer.lr = 1e-30f;
  cfg.optimizer.momentum = 0.f;
  const auto grads_of = [](Backend& be, const Model& m) {
    DeviceArray<float> g(be, m.param_count());
    be.copy(g.get(), m.grads(), m.param_count() * sizeof(float));
    return g.download();
  };

  Model single(backend(), spec, b, 8);
  cfg.batch = b;
  Trainer one(backend(), single, data, kSyntheticNorm, cfg);
  std::vector<std::vector<float>> small_steps;
  for (int t = 0; t < steps * R; ++t) {
    one.step();
    small_steps.push_back(grads_of(backend(), single));
  }

  std::vector<std::unique_ptr<Backend>> owned;
  std::vector<std::unique_ptr<Model>> models;
  std::vector<Backend*> bes;
  std::vector<Model*> ms;
  BackendOptions opts;
  opts.threads = 2;  // the suite's setting (tests/main.cpp): Kokkos takes one per process
  for (int r = 0; r < R; ++r) {
    owned.push_back(make_backend(backend_name(), opts));
    models.push_back(std::make_unique<Model>(*owned.back(), spec, b, 8));
    bes.push_back(owned.back().get());
    ms.push_back(models.back().get());
  }
  auto coll = make_collective(backend_name(), bes, "host");
  cfg.batch = B;
  Trainer dp(bes, ms, coll.get(), data, kSyntheticNorm, cfg);
  for (int s = 0; s < steps; ++s) {
    dp.step();
    std::vector<float> want(small_steps[0].size(), 0.f);
    for (int r = 0; r < R; ++r)
      for (size_t i = 0; i < want.size(); ++i) want[i] += small_steps[size_t(s * R + r)][i] / R;
    for (int r = 0; r < R; ++r)
      check_close("replica " + std::to_string(r) + "'s all-reduced gradient at step " +
                      std::to_string(s) + " vs one device's steps " + std::to_string(s * R) +
                      " and " + std::to_string(s * R + 1),
                  grads_of(*bes[size_t(r)], *ms[size_t(r)]), want, 1e-5);
  }
  // Not synchronised: each replica's running statistics follow its own shards.
  CHECK(ms[0]->get_state() != ms[1]->get_state());
  CHECK(ms[0]->get_params() == ms[1]->get_params());
}

}  // TEST_SUITE

}  // namespace pcnn::test
