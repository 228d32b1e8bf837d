// Memory accounting: the contract's counter (backends/memory_counter.hpp) on its own, and on
// every backend a model's parameters and activations counted while it lives and given back
// when it is freed.
#include "backends/device_array.hpp"
#include "models/model.hpp"
#include "models/model_spec.hpp"
#include "tests/harness.hpp"
#include "tests/synthetic.hpp"
#include "train/trainer.hpp"

namespace pcnn::test {

TEST_SUITE("core") {

TEST_CASE("memory counter: current and peak bytes, unknown pointers ignored, peak reset") {
  MemoryCounter m;
  int a = 0, b = 0, c = 0;
  m.add(&a, 100);
  m.add(&b, 50);
  CHECK(m.usage().current == 150);
  m.remove(&a);
  m.remove(&c);  // never added: no effect
  CHECK(m.usage().current == 50);
  CHECK(m.usage().peak == 150);
  m.reset_peak();
  CHECK(m.usage().peak == 50);
  m.add(&a, 20);
  CHECK(m.usage().peak == 70);
  m.remove(&a);
  m.remove(&a);  // twice: the second is unknown
  m.remove(&b);
  CHECK(m.usage().current == 0);
}

TEST_CASE("activation bytes per image: LeNet-5 fused keeps less than its layers one by one") {
  const ModelSpec spec = load_model_spec("lenet5");
  // 2,365,440 bytes for a batch of 64 (tests/cli_show.sh): 36,960 per image, fused = outputs
  // 4 * (1176 + 400 + 120 + 84 + 10) = 7160 + argmax bytes 1176 + 400 = 1576 + two gradient
  // buffers of the largest output 2 * 4 * 1176 = 9408 + the largest workspace, conv1's pre-pool
  // output, 4 * 6*28*28 = 18816 (tests/test_model_costs.cpp counts them layer by layer).
  CHECK(activation_bytes_per_image(spec) == 36960);
  CHECK(activation_bytes_per_image(spec, false) > activation_bytes_per_image(spec));
}

}  // TEST_SUITE

TEST_SUITE("backend") {

TEST_CASE("memory: a buffer is counted to the byte and given back") {
  Backend& be = backend();
  const size_t before = be.memory_usage().current;
  {
    DeviceArray<float> a(be, 1000);
    CHECK(be.memory_usage().current == before + 4000);
    CHECK(be.memory_usage().peak >= before + 4000);
  }
  CHECK(be.memory_usage().current == before);
}

TEST_CASE("memory: a training model's parameters and activations are counted, then freed") {
  Backend& be = backend();
  const ModelSpec spec = load_model_spec("lenet5");
  const Dataset data = synthetic_dataset(64, 28, 28, 3);
  const Normalization norm(0.2f, 3.f);
  const int batch = 16;
  TrainConfig cfg;
  cfg.batch = batch;
  const auto train_a_little = [&](size_t* model_bytes) {
    Model model(be, spec, batch, 7);
    *model_bytes = 2 * model.param_count() * sizeof(float) +
                   size_t(batch) * activation_bytes_per_image(spec);
    Trainer trainer(be, model, data, norm, cfg);
    for (int s = 0; s < 3; ++s) trainer.step();
    be.synchronize();
  };
  // Once first: the backend's own scratch (grown on first use and kept) is allocated then.
  size_t model_bytes = 0;
  train_a_little(&model_bytes);
  const size_t baseline = be.memory_usage().current;
  be.reset_peak_memory();
  train_a_little(&model_bytes);
  INFO("backend " << backend_name() << ": baseline " << baseline << ", peak "
                  << be.memory_usage().peak << ", parameters + activations " << model_bytes);
  CHECK(be.memory_usage().peak >= baseline + model_bytes);
  CHECK(be.memory_usage().current == baseline);
}

}  // TEST_SUITE

}  // namespace pcnn::test
