// Numerical faults: serial's check_step against hand-computed metrics, skipped optimizer steps
// leaving everything as it was, the names a fault is given, and, on the backend under test, a
// run whose gradients overflow: --on-nan stop names the step and keeps the parameters finite,
// skip trains on.
#include <cmath>
#include <memory>

#include "backends/collective.hpp"
#include "backends/registry.hpp"
#include "core/step_check_math.hpp"
#include "models/model.hpp"
#include "tests/harness.hpp"
#include "tests/op_table.hpp"
#include "tests/synthetic.hpp"
#include "train/trainer.hpp"

namespace pcnn::test {

namespace {
struct Checked {
  std::vector<float> metrics;
  float skip = -1;
};

// One check_step on serial (host memory: the pointers are the vectors').
Checked serial_check(std::vector<float> grads, int32_t step, std::vector<float> metrics) {
  auto be = make_backend("serial");
  std::vector<float> hyper(kHyperCount, 0.5f);
  be->check_step(grads.size(), grads.data(), &step, metrics.data(), hyper.data());
  return {metrics, hyper[kHyperSkip]};
}

bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// A run on the synthetic set (48 images, batch 8: 6 steps an epoch) whose learning rate of 1e30
// makes step 1's update huge, so that step 2's activations and gradients overflow.
struct FaultRun {
  EpochStats stats;
  std::vector<float> params;
  int64_t global_step = 0;
  std::vector<float> after_step1;
};

FaultRun overflowing_run(Backend& be, NanPolicy policy, bool report_every_step) {
  const Dataset data = synthetic_dataset(48, 28, 28, 5);
  TrainConfig cfg;
  cfg.batch = 8;
  cfg.epochs = 1;
  cfg.optimizer.kind = "sgd";
  cfg.optimizer.lr = 1e30f;
  cfg.on_nan = policy;
  FaultRun run;
  {
    Model m(be, builtin_model("lenet5"), 8, 42);
    Trainer t(be, m, data, {0.2f, 3.f}, cfg);
    t.step();
    run.after_step1 = m.get_params();
  }
  Model m(be, builtin_model("lenet5"), 8, 42);
  Trainer t(be, m, data, {0.2f, 3.f}, cfg);
  if (report_every_step) t.on_progress([](const StepProgress&) {}, 0, 1);
  run.stats = t.train_epoch(0);
  run.params = m.get_params();
  run.global_step = t.global_step();
  return run;
}
}  // namespace

TEST_SUITE("core") {

TEST_CASE("pack_u32 keeps every 32-bit value exactly in two floats") {
  for (uint32_t v : {0u, 1u, 65535u, 65536u, 16777217u, 0x7fffffffu, 0xfffffffeu}) {
    float two[2];
    pack_u32(v, two);
    CHECK(unpack_u32(two) == v);
  }
}

TEST_CASE("serial check_step: finite steps count, faulty ones are recorded once") {
  std::vector<float> grads(70001, 0.25f);
  // finite: the step's sums move to the epoch's, nothing is skipped
  Checked c = serial_check(grads, 69999, metrics_before_check(0.75f));
  CHECK(c.skip == 0.f);
  CHECK(c.metrics == std::vector<float>{13.25f, 35.f, 0, 0, 0, 0, 0, 0, 0});

  // a NaN at 70000 in step 69999 (0-based): recorded as step 70000 = 0x11170 and gradient
  // 70001 = 0x11171, 1-based, each as (high 16 bits, low 16 bits); the epoch's sums stay
  grads[70000] = std::nanf("");
  c = serial_check(grads, 69999, metrics_before_check(0.75f));
  CHECK(c.skip == 1.f);
  CHECK(c.metrics == std::vector<float>{12.5f, 30.f, 0, 0, 1, 1, 0x1170, 1, 0x1171});

  // a second fault, lower in the arena, does not replace the first's record
  grads[3] = -INFINITY;
  std::vector<float> again = c.metrics;
  again[kMetricStepLoss] = 0.5f;
  c = serial_check(grads, 70000, again);
  CHECK(c.skip == 1.f);
  CHECK(c.metrics == std::vector<float>{12.5f, 30.f, 0, 0, 2, 1, 0x1170, 1, 0x1171});

  // only the loss: the gradient field says 0
  c = serial_check(std::vector<float>(10, 1.f), 4, metrics_before_check(INFINITY));
  CHECK(c.skip == 1.f);
  CHECK(c.metrics == std::vector<float>{12.5f, 30.f, 0, 0, 1, 0, 5, 0, 0});
}

TEST_CASE("serial optimizers leave parameters and state untouched on a skipped step") {
  auto be = make_backend("serial");
  int cases = 0;
  for (const OpCase& c : op_table()) {
    if (!c.p.skip) continue;
    ++cases;
    const std::vector<TensorSpec> in = case_tensors(c);
    const RunResult got = run_case(*be, c);
    CHECK_MESSAGE(got.problems.empty(), c.label() << ": " << got.problems);
    for (const Output& o : got.outputs) {
      if (o.name == "step") continue;  // the case's own counter, advanced by increment
      for (const TensorSpec& t : in)
        if (t.name == o.name) CHECK_MESSAGE(o.values == t.init, c.label() << ": " << o.name);
    }
  }
  CHECK(cases == 4);  // sgd and adam, aligned and not
}

TEST_CASE("a fault is named by its step in the epoch and its layer, weights or bias") {
  auto be = make_backend("serial");
  Model m(*be, builtin_model("lenet5"), 1, 1);
  CHECK(parameter_name(m, 0) == "layer 1 (conv 5x5 x6 pad 2 +relu +maxpool 2) weights");
  CHECK(parameter_name(m, 150) == "layer 1 (conv 5x5 x6 pad 2 +relu +maxpool 2) bias");
  CHECK(parameter_name(m, 156) == "layer 2 (conv 5x5 x16 +relu +maxpool 2) weights");
  CHECK(parameter_name(m, 61705) == "layer 6 (dense 84->10) bias");
  CHECK(describe_fault(m, {1234, 156}, 937) ==
        "the gradients are not finite at step 1234 (epoch 2, step 297 of 937), first in layer 2 "
        "(conv 5x5 x16 +relu +maxpool 2) weights");
  CHECK(describe_fault(m, {937, -1}, 937) ==
        "the loss is not finite at step 937 (epoch 1, step 937 of 937)");
}

}  // TEST_SUITE("core")

TEST_SUITE("backend") {

TEST_CASE("overflowing gradients: stop names the step, skip trains on, parameters stay finite") {
  Backend& be = backend();
  const FaultRun stop = overflowing_run(be, NanPolicy::Stop, true);
  REQUIRE(all_finite(stop.after_step1));  // the premise: step 1 itself was still finite
  CHECK(stop.stats.fault_stop);
  CHECK(stop.stats.stopped);  // at the read-back after step 2, before the epoch's end
  CHECK(stop.global_step == 2);
  CHECK(stop.stats.skipped_steps == 1);
  CHECK(stop.stats.first_fault.step == 2);
  CHECK(stop.stats.first_fault.grad_index >= 0);
  CHECK(stop.stats.first_fault.grad_index < int64_t(stop.params.size()));
  CHECK(all_finite(stop.params));
  // step 2 was not applied at all (a tolerance: kokkos and cudnn are not bitwise repeatable)
  check_close("parameters after the stop", stop.params, stop.after_step1, 1e-5);
  CHECK(std::isfinite(stop.stats.train_loss));  // over step 1, the one kept

  // Without progress reports the epoch's end is the first read-back: all steps ran.
  const FaultRun late = overflowing_run(be, NanPolicy::Stop, false);
  CHECK(late.stats.fault_stop);
  CHECK_FALSE(late.stats.stopped);
  CHECK(late.global_step == 6);
  CHECK(late.stats.skipped_steps == 5);  // the parameters never moved again
  check_close("parameters at the epoch's end", late.params, late.after_step1, 1e-5);

  const FaultRun skip = overflowing_run(be, NanPolicy::Skip, true);
  CHECK_FALSE(skip.stats.fault_stop);
  CHECK_FALSE(skip.stats.stopped);
  CHECK(skip.global_step == 6);
  CHECK(skip.stats.skipped_steps == 5);
  CHECK(skip.stats.first_fault.step == 2);
  CHECK(skip.stats.first_fault.grad_index == stop.stats.first_fault.grad_index);
  CHECK(all_finite(skip.params));
  check_close("parameters after skipping", skip.params, skip.after_step1, 1e-5);
}

TEST_CASE("overflowing gradients over two replicas: both skip alike, the step named once") {
  const Dataset data = synthetic_dataset(48, 28, 28, 5);
  TrainConfig cfg;
  cfg.batch = 8;
  cfg.optimizer.kind = "sgd";
  cfg.optimizer.lr = 1e30f;
  cfg.on_nan = NanPolicy::Skip;
  std::vector<std::unique_ptr<Backend>> owned;
  std::vector<std::unique_ptr<Model>> models;
  std::vector<Backend*> bes;
  std::vector<Model*> ms;
  for (int r = 0; r < 2; ++r) {
    owned.push_back(make_backend(backend_name()));
    models.push_back(std::make_unique<Model>(*owned.back(), builtin_model("lenet5"), 4, 42));
    bes.push_back(owned.back().get());
    ms.push_back(models.back().get());
  }
  auto coll = make_collective(backend_name(), bes, "host");
  Trainer dp(bes, ms, coll.get(), data, {0.2f, 3.f}, cfg);
  const EpochStats st = dp.train_epoch(0);
  CHECK(st.skipped_steps == 5);
  CHECK(st.first_fault.step == 2);
  const std::vector<float> first = ms[0]->get_params();
  CHECK(all_finite(first));
  CHECK(ms[1]->get_params() == first);  // bit for bit: neither applied a step the other skipped
  const TrainingState state = dp.state();
  for (int r = 0; r < 2; ++r)  // each replica counted the same faults
    CHECK(state.metrics[size_t(r) * kMetricCount + kMetricBadSteps] == 5.f);
}

}  // TEST_SUITE("backend")

}  // namespace pcnn::test
