// A colour (3-channel) data set trains on the backend under test: the gather's channel planes and
// per-channel normalisation feed a network that learns (the op table checks the gather itself
// against serial; tests/test_data_formats.cpp the readers).
#include "models/model.hpp"
#include "tests/harness.hpp"
#include "tests/synthetic.hpp"
#include "train/trainer.hpp"

namespace pcnn::test {

TEST_SUITE("backend") {

TEST_CASE("a colour data set (3 channels) trains: the loss falls and accuracy beats chance") {
  Backend& be = backend();
  const Dataset train = synthetic_rgb_dataset(400, 16, 21), test = synthetic_rgb_dataset(100, 16, 22);
  ModelSpec spec = builtin_model("lenet5");
  spec.in_c = 3;
  spec.in_h = spec.in_w = 16;
  spec.name = "lenet5-rgb16";
  Model m(be, spec, 20, 4);
  TrainConfig cfg;
  cfg.batch = 20;
  cfg.optimizer.lr = 0.003f;
  const Normalization norm = normalization_of(train);
  Trainer t(be, m, train, norm, cfg);
  const double before = evaluate(be, m, test, norm).loss;
  for (int e = 0; e < 3; ++e) t.train_epoch(e);
  const EvalResult after = evaluate(be, m, test, norm);
  INFO("backend " << backend_name() << ": test loss " << before << " -> " << after.loss
                  << ", accuracy " << after.accuracy);
  CHECK(after.loss < 0.5 * before);
  CHECK(after.accuracy > 0.5);  // chance: 0.1
}

}  // TEST_SUITE

}  // namespace pcnn::test
