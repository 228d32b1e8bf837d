// The bench's derived numbers: head-to-head ratios between backends of one run, and that they
// survive the trip through bench.json (pcnn bench --from recomputes them).
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/plots.hpp"
#include "bench/report.hpp"
#include "report/svg_plot.hpp"
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

TEST_CASE("bench speedup decomposition: algorithmic x parallel = total, GPU over the fastest CPU") {
  bench::BenchReport r;
  r.runs = {timed_run("serial", 1, "lenet5", 64, 0.040), timed_run("openmp", 1, "lenet5", 64, 0.010),
            timed_run("openmp", 2, "lenet5", 64, 0.006), timed_run("openmp", 4, "lenet5", 64, 0.004),
            timed_run("cuda", 0, "lenet5", 64, 0.0005), timed_run("openmp", 4, "lenet5", 256, 0.012)};
  r.runs[4].host_memory = false;
  const bench::Decomposition d = bench::decompose(r);
  CHECK(d.reference == "serial");
  REQUIRE(d.cpu.size() == 4);  // serial takes no thread count; every openmp run is a row
  const bench::CpuGain& one = d.cpu[0];
  CHECK(one.threads == 1);
  CHECK(one.algorithmic == doctest::Approx(4.0));
  CHECK(one.parallel == doctest::Approx(1.0));
  CHECK(one.efficiency == doctest::Approx(1.0));
  const bench::CpuGain& four = d.cpu[2];
  CHECK(four.threads == 4);
  CHECK(four.algorithmic == doctest::Approx(4.0));
  CHECK(four.parallel == doctest::Approx(2.5));
  CHECK(four.efficiency == doctest::Approx(0.625));
  CHECK(four.total == doctest::Approx(10.0));
  CHECK(four.total == doctest::Approx(four.algorithmic * four.parallel));
  CHECK(d.cpu[1].efficiency == doctest::Approx(0.010 / 0.006 / 2));
  // Batch 256 has neither serial nor a 1-thread run: both ratios unknown, never guessed.
  CHECK(d.cpu[3].batch == 256);
  CHECK(d.cpu[3].algorithmic == 0);
  CHECK(d.cpu[3].parallel == 0);
  CHECK(d.cpu[3].total == 0);
  REQUIRE(d.gpu.size() == 1);
  CHECK(d.gpu[0].versus == "openmp, 4 threads");
  CHECK(d.gpu[0].gain == doctest::Approx(8.0));

  const auto j = bench::to_json(r).at("speedup_decomposition");
  CHECK(j.at("cpu").size() == 4);
  CHECK(j.at("cpu")[2].at("parallel_efficiency").get<double>() == doctest::Approx(0.625));
  CHECK(j.at("cpu")[3].at("parallel_gain").is_null());
  CHECK(j.at("gpu")[0].at("gain").get<double>() == doctest::Approx(8.0));
}

TEST_CASE("bench metadata: build, version, topology and load survive bench.json") {
  bench::BenchReport r;
  r.runs = {timed_run("serial", 1, "lenet5", 64, 0.040)};
  r.version = "0.1";
  r.commit = "abc1234";
  r.build = {"GNU 12.2.0", "-O3 -march=native", "Release"};
  r.topology = {1, 4, 8, "hwloc (API 2.8.0)"};
  r.host_threads = 8;
  r.loads_before = {0.5, 0.25, 0.125};
  const bench::BenchReport back = bench::report_from_json(bench::to_json(r));
  CHECK(back.version == "0.1");
  CHECK(back.commit == "abc1234");
  CHECK(back.build.compiler == "GNU 12.2.0");
  CHECK(back.build.flags == "-O3 -march=native");
  CHECK(back.build.build_type == "Release");
  CHECK(back.topology.physical_cores == 4);
  CHECK(back.topology.packages == 1);
  CHECK(back.topology.source == "hwloc (API 2.8.0)");
  CHECK(back.loads_before == std::vector<double>{0.5, 0.25, 0.125});
  // This machine: a topology that hangs together, whichever way it was read.
  const bench::CpuTopology t = bench::host_topology();
  CHECK(t.hardware_threads >= 1);
  if (t.physical_cores > 0) {
    CHECK(t.physical_cores <= t.hardware_threads);
    CHECK(t.packages >= 1);
    CHECK(t.packages <= t.physical_cores);
  }
  CHECK_FALSE(t.source.empty());
  CHECK_FALSE(bench::build_info().compiler.empty());
}

TEST_CASE("bench figures stand alone: viewBox, title, ratio named, one colour per backend") {
  Figure fig;
  LineChart c;
  c.title = "a <chart>";
  c.series.push_back({"s", {1, 2}, {3, 4}});
  c.series.back().lo = {2.5, 3.5};
  c.series.back().hi = {3.5, 4.5};
  fig.lines = {c};
  fig.footer = "host: test machine | 2026-01-01 | pcnn 0.1";
  const std::string svg = render_svg(fig);
  CHECK(svg.find("viewBox='0 0 ") != std::string::npos);
  CHECK(svg.find("<title>a &lt;chart&gt;</title>") != std::string::npos);
  CHECK(svg.find("host: test machine") != std::string::npos);
  CHECK(svg.find("<path d='M") != std::string::npos);  // the spread's whiskers

  bench::BenchReport r;
  r.runs = {timed_run("serial", 1, "lenet5", 64, 0.040), timed_run("openmp", 1, "lenet5", 64, 0.010),
            timed_run("openmp", 2, "lenet5", 64, 0.006)};
  r.options.batches = {64};
  r.host_cpu = "Test CPU";
  r.date = "2026-01-01T00:00:00Z";
  r.version = "0.1";
  bench::compute_speedups(r);
  const std::string dir =
      (std::filesystem::temp_directory_path() / "pcnn_test_bench_figures").string();
  std::filesystem::create_directories(dir);
  const auto written = bench::write_bench_plots(dir, r);
  CHECK(written.size() == 3);  // speedup, gains, scaling (no per-layer runs)
  auto read = [&](const std::string& name) {
    std::ifstream in(dir + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string speedup = read("speedup_lenet5.svg"), gains = read("gains_lenet5.svg"),
                    scaling = read("scaling_lenet5.svg");
  for (const std::string* f : {&speedup, &gains, &scaling}) {
    CHECK(f->find("viewBox=") != std::string::npos);
    CHECK(f->find("<title>") != std::string::npos);
    CHECK(f->find("Test CPU") != std::string::npos);
    CHECK(f->find("pcnn 0.1") != std::string::npos);
    CHECK(f->find("2026-01-01") != std::string::npos);
    CHECK(f->find(bench::backend_color("openmp")) != std::string::npos);
  }
  CHECK(bench::backend_color("openmp") != bench::backend_color("serial"));
  CHECK(speedup.find(bench::backend_color("serial")) != std::string::npos);
  CHECK(gains.find("algorithmic gain: openmp 1 thread / serial") != std::string::npos);
  CHECK(scaling.find("parallel gain: openmp N threads / openmp 1 thread") != std::string::npos);
  CHECK(scaling.find("parallel efficiency") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("bench default thread sweep: 1, powers of two, all cores") {
  CHECK(bench::thread_sweep(1) == std::vector<int>{1});
  CHECK(bench::thread_sweep(2) == std::vector<int>{1, 2});
  CHECK(bench::thread_sweep(6) == std::vector<int>{1, 2, 4, 6});
  CHECK(bench::thread_sweep(16) == std::vector<int>{1, 2, 4, 8, 16});
}

}  // TEST_SUITE

}  // namespace pcnn::test
