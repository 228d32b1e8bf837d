// Training with whole-step graphs (captured at step 2, replayed after) gives what eager training
// gives, and a backend that says it supports graphs really replays one: a capture that fell back
// to eager steps (backends may do so rather than fail the run) fails this test.
#include <cmath>

#include "models/model.hpp"
#include "tests/harness.hpp"
#include "tests/synthetic.hpp"
#include "train/trainer.hpp"

namespace pcnn::test {

TEST_SUITE("backend") {

TEST_CASE("graphs on and off train the same: losses and parameters match") {
  const Dataset data = synthetic_dataset(96, 28, 28, 31);
  const ModelSpec spec = builtin_model("lenet5");
  const Normalization norm{0.2f, 3.f};
  struct Run {
    std::vector<double> losses;
    std::vector<float> params;
    bool used_graph = false;
  };
  const auto train = [&](bool graphs) {
    TrainConfig cfg = adam_config(16, 7, 2e-3f);  // 6 steps an epoch
    cfg.graphs = graphs;
    Model m(backend(), spec, 16, 8);
    Trainer t(backend(), m, data, norm, cfg);
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
