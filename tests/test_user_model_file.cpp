// A user-written network from a model file (examples/models/convnet_bn_dropout.json: batchnorm
// after convolutions and a dense layer, dropout, a padded pool), not a built-in: it trains on
// every backend with serial's loss curve, and evaluates (running statistics, no dropout) alike.
#include <cmath>

#include "models/model.hpp"
#include "tests/harness.hpp"
#include "tests/synthetic.hpp"
#include "train/trainer.hpp"

namespace pcnn::test {

namespace {

struct Run {
  std::vector<double> losses;  // training loss per epoch
  double eval_loss = 0;        // after training, in inference mode
  std::vector<float> params, state;
};

Run train_file_model(Backend& be) {
  const ModelSpec spec =
      load_model_spec(std::string(PCNN_SOURCE_DIR) + "/examples/models/convnet_bn_dropout.json");
  const Dataset data = synthetic_dataset(64, 28, 28, 23);
  Model m(be, spec, 8, 19);
  TrainConfig cfg;
  cfg.batch = 8;
  cfg.seed = 7;
  // SGD: a convolution's bias before a batchnorm has a gradient of zero plus rounding noise,
  // which Adam would scale up to full steps that differ per backend (tests/test_batchnorm.cpp).
  cfg.optimizer.kind = "sgd";
  cfg.optimizer.lr = 0.02f;
  Trainer t(be, m, data, {0.2f, 3.f}, cfg);
  Run r;
  for (int e = 0; e < 3; ++e) r.losses.push_back(t.train_epoch(e).train_loss);
  r.eval_loss = evaluate(be, m, data, {0.2f, 3.f}).loss;
  r.params = m.get_params();
  r.state = m.get_state();
  return r;
}

}  // namespace

TEST_SUITE("backend") {

TEST_CASE("a model file with batchnorm and dropout trains and evaluates like serial") {
  const Run want = train_file_model(reference()), got = train_file_model(backend());
  REQUIRE(got.losses.size() == want.losses.size());
  // Tolerance 1e-4 relative: the sums of each backend run in another order (~1e-6 a step),
  // compounded over 24 steps; a wrong mask, statistic or gradient moves the loss by 1e-2 and more.
  for (size_t e = 0; e < want.losses.size(); ++e) {
    INFO("epoch " << e + 1 << ": loss " << got.losses[e] << " vs serial " << want.losses[e]);
    CHECK(std::fabs(got.losses[e] - want.losses[e]) <= 1e-4 * std::fabs(want.losses[e]));
  }
  CHECK(std::fabs(got.eval_loss - want.eval_loss) <= 1e-4 * std::fabs(want.eval_loss));
  check_close("parameters after 3 epochs", got.params, want.params, 1e-4);
  check_close("batchnorm running statistics", got.state, want.state, 1e-4);
  CHECK(want.losses.back() < want.losses.front());  // it learns
}

}  // TEST_SUITE

}  // namespace pcnn::test
