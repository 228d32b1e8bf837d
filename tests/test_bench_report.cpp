// The bench's derived numbers: head-to-head ratios between backends of one run, and that they
// survive the trip through bench.json (pcnn bench --from recomputes them).
#include <nlohmann/json.hpp>

#include "bench/report.hpp"
#include "tests/harness.hpp"

namespace pcnn::test {

namespace {
bench::ModelRun timed_run(const std::string& backend, int threads, const std::string& model,
                          int batch, double step_s) {
  bench::ModelRun r;
  r.backend = backend;
  r.device = "test";
  r.threads = threads;
  r.model = model;
  r.batch = batch;
  for (bench::Summary* s : {&r.step, &r.forward, &r.backward}) {
    s->median = s->min = s->max = s->q1 = s->q3 = step_s;
    s->samples = 3;
    s->block = 1;
  }
  return r;
}

const bench::HeadToHead* find(const std::vector<bench::HeadToHead>& v, const std::string& a,
                              const std::string& b, int batch) {
  for (const auto& h : v)
    if (h.backend == a && h.versus == b && h.batch == batch) return &h;
  return nullptr;
}
}  // namespace

TEST_SUITE("core") {

TEST_CASE("bench head to head: same-run ratios, fastest thread count, only pairs that ran") {
  bench::BenchReport r;
  r.runs = {timed_run("serial", 1, "lenet5", 64, 0.040), timed_run("openmp", 1, "lenet5", 64, 0.010),
            timed_run("openmp", 4, "lenet5", 64, 0.004), timed_run("cuda", 0, "lenet5", 64, 0.0001),
            timed_run("cudnn", 0, "lenet5", 64, 0.0003), timed_run("cuda", 0, "lenet5", 1024, 0.0005)};
  const auto pairs = bench::head_to_head(r);
  const auto* gpu = find(pairs, "cuda", "cudnn", 64);
  REQUIRE(gpu);
  CHECK(gpu->ratio == doctest::Approx(3.0));
  CHECK(gpu->images_per_s == doctest::Approx(640000.0));
  CHECK(gpu->versus_images_per_s == doctest::Approx(64 / 0.0003));
  const auto* cpu = find(pairs, "openmp", "serial", 64);
  REQUIRE(cpu);
  CHECK(cpu->ratio == doctest::Approx(10.0));  // the 4-thread run, not the 1-thread one
  CHECK_FALSE(find(pairs, "cuda", "cudnn", 1024));  // cudnn did not run at 1024
  CHECK_FALSE(find(pairs, "kokkos", "openmp", 64));  // kokkos did not run at all

  const auto back = bench::head_to_head(bench::report_from_json(bench::to_json(r)));
  REQUIRE(back.size() == pairs.size());
  for (size_t i = 0; i < back.size(); ++i) CHECK(back[i].ratio == doctest::Approx(pairs[i].ratio));
  CHECK(bench::to_json(r).at("head_to_head").size() == pairs.size());
}

}  // TEST_SUITE

}  // namespace pcnn::test
