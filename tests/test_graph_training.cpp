// Training with whole-step graphs (captured at step 2, replayed after) gives what eager training
// gives, and a backend that says it supports graphs really replays one: a capture that fell back
// to eager steps (backends may do so rather than fail the run) fails this test. The trainer's
// side of a failed capture is tested on the host with a serial backend that refuses to capture.
#include <cmath>

#include "backends/serial/serial_backend.hpp"
#include "core/check.hpp"
#include "models/model.hpp"
#include "tests/harness.hpp"
#include "tests/synthetic.hpp"
#include "train/trainer.hpp"

namespace pcnn::test {

namespace {

// Serial kernels behind a graph interface whose capture never starts: begin throws (so nothing
// of the step runs under it), end reports the failure, or, with can_fall_back false, claims a
// graph as a backend that cannot fall back would.
class RefusingCapture : public SerialBackend {
 public:
  explicit RefusingCapture(bool can_fall_back) : can_fall_back_(can_fall_back) {}
  bool supports_graphs() const override { return true; }
  void graph_begin_capture() override {
    ++begins;
    throw Error("capture refused");
  }
  bool graph_end_capture() override {
    ++ends;
    return !can_fall_back_;
  }
  void graph_launch() override { ++launches; }
  int begins = 0, ends = 0, launches = 0;

 private:
  bool can_fall_back_;
};

}  // namespace

TEST_SUITE("core") {

TEST_CASE("a failed graph capture: the trainer steps eagerly from then on, with the same result") {
  const Dataset data = synthetic_dataset(64, 28, 28, 41);
  const ModelSpec spec = builtin_model("lenet5");
  const TrainConfig cfg = adam_config(16, 9, 2e-3f);  // 4 steps an epoch
  SerialBackend plain;
  Model want_model(plain, spec, 16, 8);
  Trainer want(plain, want_model, data, kSyntheticNorm, cfg);
  RefusingCapture refusing(true);
  Model got_model(refusing, spec, 16, 8);
  Trainer got(refusing, got_model, data, kSyntheticNorm, cfg);
  for (int s = 0; s < 6; ++s) {
    want.step();
    got.step();
  }
  CHECK_FALSE(got.using_graph());
  CHECK(refusing.begins == 1);  // step 2 tried once, never again
  CHECK(refusing.ends == 1);
  CHECK(refusing.launches == 0);
  CHECK(got_model.get_params() == want_model.get_params());  // same kernels, each step once

  // A backend that cannot fall back: the exception from inside the capture reaches the caller.
  RefusingCapture strict(false);
  Model strict_model(strict, spec, 16, 8);
  Trainer strict_trainer(strict, strict_model, data, kSyntheticNorm, cfg);
  strict_trainer.step();
  CHECK_THROWS_WITH(strict_trainer.step(), "capture refused");
}

}  // TEST_SUITE("core")

TEST_SUITE("backend") {

TEST_CASE("graphs on and off train the same: losses and parameters match") {
  const Dataset data = synthetic_dataset(96, 28, 28, 31);
  const ModelSpec spec = builtin_model("lenet5");
  struct Run {
    std::vector<double> losses;
    std::vector<float> params;
    bool used_graph = false;
  };
  const auto train = [&](bool graphs) {
    TrainConfig cfg = adam_config(16, 7, 2e-3f);  // 6 steps an epoch
    cfg.graphs = graphs;
    Model m(backend(), spec, 16, 8);
    Trainer t(backend(), m, data, kSyntheticNorm, cfg);
    Run r;
    for (int e = 0; e < 2; ++e) r.losses.push_back(t.train_epoch(e).train_loss);
    r.params = m.get_params();
    r.used_graph = t.using_graph();
    return r;
  };
  const Run eager = train(false), graphed = train(true);
  INFO("backend " << backend_name());
  CHECK_FALSE(eager.used_graph);
  CHECK(graphed.used_graph == backend().supports_graphs());
  for (size_t e = 0; e < eager.losses.size(); ++e) {
    INFO("epoch " << e << ": eager loss " << eager.losses[e] << ", with graphs "
                  << graphed.losses[e]);
    CHECK(std::isfinite(eager.losses[e]));
    CHECK(std::fabs(graphed.losses[e] - eager.losses[e]) <= 1e-5 + 1e-4 * std::fabs(eager.losses[e]));
  }
  check_close("parameters after two epochs, graphs vs eager", graphed.params, eager.params, 1e-4);
}

}  // TEST_SUITE

}  // namespace pcnn::test
