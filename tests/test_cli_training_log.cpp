// What pcnn train reports and writes: progress reports inside an epoch (on every backend: they
// arrive when asked, count right, and leave the training bit for bit as it was), numbers that
// read back exactly, the training log's round trip, and the reasons given for an unusable backend.
#include <dlfcn.h>

#include <cstdio>
#include <limits>

#include "backends/registry.hpp"
#include "models/model.hpp"
#include "report/chance_level.hpp"
#include "report/number_format.hpp"
#include "report/training_log.hpp"
#include "backends/unavailable_reason.hpp"
#include "tests/harness.hpp"
#include "tests/synthetic.hpp"
#include "train/trainer.hpp"

namespace pcnn::test {

TEST_SUITE("core") {

TEST_CASE("chance_level_warning: a run that learned nothing, and only such a run") {
  LogRow collapsed;  // session 15's batch-512 recipe on seed 3: one class, every loss finite
  collapsed.test_accuracy = 0.1;
  collapsed.train_loss = 2.3026;
  const std::string w = chance_level_warning(collapsed, 10, 10000);
  CHECK(w.find("chance level (test accuracy 10.00 % with 10 classes") != std::string::npos);
  CHECK(w.find("--lr") != std::string::npos);
  LogRow learned = collapsed;  // a loss at ln 10 but an accuracy well above chance
  learned.test_accuracy = 0.16;
  CHECK(chance_level_warning(learned, 10, 10000).empty());
  LogRow lucky = collapsed;  // chance accuracy on two classes, but the loss fell
  lucky.test_accuracy = 0.5;
  lucky.train_loss = 0.6;
  CHECK(chance_level_warning(lucky, 2, 10000).empty());
  lucky.train_loss = 0.69;
  CHECK_FALSE(chance_level_warning(lucky, 2, 10000).empty());
  LogRow unknown = collapsed;  // a figure missing (NaN): no verdict
  unknown.train_loss = NAN;
  CHECK(chance_level_warning(unknown, 10, 10000).empty());
  CHECK(chance_level_warning(collapsed, 1, 10000).empty());
  CHECK(chance_level_warning(collapsed, 10, 499).empty());  // a trial run on a few images
  CHECK_FALSE(chance_level_warning(collapsed, 10, 500).empty());
}

TEST_CASE("round_trip: the shortest text that reads back as the same number") {
  CHECK(round_trip(0.1) == "0.1");
  CHECK(round_trip(13328612.5) == "13328612.5");
  CHECK(round_trip(0.002f) == "0.002");
  CHECK(round_trip(1e-20) == "1e-20");
  Rng rng(3);
  for (int i = 0; i < 1000; ++i) {
    const double v = std::ldexp(rng.uniform() - 0.5, int(rng.uniform() * 80) - 40);
    CHECK(std::strtod(round_trip(v).c_str(), nullptr) == v);
    const float f = float(v);
    CHECK(std::strtof(round_trip(f).c_str(), nullptr) == f);
  }
}

TEST_CASE("duration_text: seconds, minutes, hours") {
  CHECK(duration_text(8.44) == "8.4 s");
  CHECK(duration_text(185) == "3 min 05 s");
  CHECK(duration_text(7620) == "2 h 07 min");
}

TEST_CASE("training log: written and read back, epoch rows and step rows, every value exact") {
  LogRow step;
  step.epoch = 1;
  step.step = 10;
  step.train_loss = 1.0 / 3;
  step.train_accuracy = 0.7;
  step.learning_rate = double(0.002f);
  step.images_per_s = 12345.678901234;
  step.elapsed_s = 0.1;
  LogRow epoch = step;
  epoch.step = 0;
  epoch.test_loss = 0.4002976715564728;
  epoch.test_accuracy = 0.8533;
  const std::string path = "test_training_log.csv";
  {
    TrainingLogFile log(path);
    log.add(step);
    log.add(epoch);
  }
  const std::vector<LogRow> rows = read_training_log(path);
  std::remove(path.c_str());
  REQUIRE(rows.size() == 2);
  CHECK(!rows[0].is_epoch_row());
  CHECK(rows[1].is_epoch_row());
  CHECK(std::isnan(rows[0].test_loss));
  const auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  for (size_t i = 0; i < 2; ++i) {
    const LogRow& want = i ? epoch : step;
    const LogRow& got = rows[i];
    CHECK(got.epoch == want.epoch);
    CHECK(got.step == want.step);
    for (double LogRow::*v : {&LogRow::train_loss, &LogRow::train_accuracy, &LogRow::test_loss,
                              &LogRow::test_accuracy, &LogRow::learning_rate,
                              &LogRow::images_per_s, &LogRow::elapsed_s})
      CHECK(same(got.*v, want.*v));
  }
}

TEST_CASE("unavailable_reason: the backend's name said once; no NVIDIA driver said so") {
  CHECK(unavailable_reason("kokkos", "kokkos: Kokkos was already finalised") ==
        "Kokkos was already finalised");
  CHECK(unavailable_reason("openmp", "no threads") == "no threads");
  // What the CUDA runtime says on a machine without the driver, and what pcnn says instead.
  const std::string runtime = "no usable CUDA device (CUDA driver version is insufficient for "
                              "CUDA runtime version)";
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY);
  if (driver) {
    dlclose(driver);
    MESSAGE("this machine has an NVIDIA driver: the no-driver message is not checked");
  } else {
    for (const char* backend : {"cuda", "cudnn"})
      CHECK(unavailable_reason(backend, std::string(backend) + ": " + runtime) ==
            "no NVIDIA driver is installed here (libcuda.so.1 not found)");
  }
}

}  // TEST_SUITE

TEST_SUITE("backend") {

TEST_CASE("progress reports: when asked, counted right, and the training unchanged") {
  const Dataset data = synthetic_dataset(96, 28, 28, 4);
  const ModelSpec spec = builtin_model("lenet5");
  TrainConfig cfg;
  cfg.batch = 8;  // 12 steps per epoch
  cfg.optimizer.kind = "adam";
  cfg.optimizer.lr = 1e-3f;
  auto train = [&](bool reporting, std::vector<StepProgress>& reports) {
    Model m(backend(), spec, 8, 7);
    Trainer t(backend(), m, data, kSyntheticNorm, cfg);
    if (reporting) t.on_progress([&](const StepProgress& p) { reports.push_back(p); }, 0, 5);
    EpochStats last;
    for (int e = 0; e < 2; ++e) last = t.train_epoch(e);
    return std::make_pair(m.get_params(), last);
  };
  std::vector<StepProgress> none, reports;
  const auto [quiet_params, quiet_stats] = train(false, none);
  const auto [params, stats] = train(true, reports);
  // A report only reads: bit for bit the same training where the backend repeats itself bitwise.
  if (backend_entry(backend().name()).bitwise_repeatable) {
    CHECK(params == quiet_params);
    CHECK(stats.train_loss == quiet_stats.train_loss);
  } else {
    REQUIRE(params.size() == quiet_params.size());
    for (size_t i = 0; i < params.size(); ++i)
      CHECK(params[i] == doctest::Approx(quiet_params[i]).epsilon(1e-3));
    CHECK(stats.train_loss == doctest::Approx(quiet_stats.train_loss).epsilon(1e-4));
  }
  REQUIRE(reports.size() == 4);  // steps 5 and 10 of each epoch
  for (size_t i = 0; i < reports.size(); ++i) {
    const StepProgress& p = reports[i];
    CHECK(p.epoch == int(i / 2) + 1);
    CHECK(p.step == (i % 2 ? 10 : 5));
    CHECK(p.steps == 12);
    CHECK(p.images == p.step * 8);
    CHECK(p.correct >= 0);
    CHECK(p.correct <= p.images);
    CHECK(p.loss_sum > 0);
    CHECK(p.seconds >= 0);
  }
  // The epoch's totals go on growing from one report to the next.
  CHECK(reports[1].loss_sum > reports[0].loss_sum);
  CHECK(reports[1].seconds >= reports[0].seconds);
}

}  // TEST_SUITE

}  // namespace pcnn::test
