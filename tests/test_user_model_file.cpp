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

// 3 epochs of the example's network on 64 synthetic 28x28 images, by SGD: a convolution's bias
// before a batchnorm has a gradient of zero plus rounding noise, which Adam would scale up to
// full steps that differ per backend (tests/test_batchnorm.cpp).
TrainedRun train_file_model(Backend& be) {
  const ModelSpec spec =
      load_model_spec(std::string(PCNN_SOURCE_DIR) + "/examples/models/convnet_bn_dropout.json");
  TrainConfig cfg;
  cfg.batch = 8;
  cfg.seed = 7;
  cfg.optimizer.kind = "sgd";
  cfg.optimizer.lr = 0.02f;
  return train_run(be, spec, 19, synthetic_dataset(64, 28, 28, 23), cfg, 3);
}

}  // namespace

TEST_SUITE("backend") {

TEST_CASE("a model file with batchnorm and dropout trains and evaluates like serial") {
  // Tolerance 1e-4 relative: the sums of each backend run in another order (~1e-6 a step),
  // compounded over 24 steps; a wrong mask, statistic or gradient moves the loss by 1e-2 and more.
  const TrainedRun want = train_file_model(reference()), got = train_file_model(backend());
  check_run_close("the file's model", got, want, 1e-4);
  CHECK(want.train_losses.back() < want.train_losses.front());  // it learns
}

}  // TEST_SUITE

}  // namespace pcnn::test
