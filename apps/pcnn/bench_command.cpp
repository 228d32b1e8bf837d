// pcnn bench: time training steps, their phases and each layer on every backend, model and batch
// size in one run; print a table and, with --out, write bench.json, CSV files and SVG graphs.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "apps/pcnn/commands.hpp"
#include "apps/pcnn/common.hpp"
#include "apps/pcnn/options.hpp"
#include "apps/pcnn/version.hpp"
#include "bench/bench_run.hpp"
#include "bench/host_info.hpp"
#include "bench/plots.hpp"
#include "bench/report.hpp"
#include "core/check.hpp"

namespace pcnn::cli {

namespace {
// Bounds of the bench's own numbers: a warm-up is never cut short by --budget, and synthetic
// images cost 784 bytes each at 28x28.
constexpr int64_t kMaxRepeat = 1000000;
constexpr int64_t kMaxWarmup = 10000;
constexpr double kMaxBudgetSeconds = 3600;
constexpr int64_t kMaxSyntheticImages = 1000000;

struct BenchCliOptions {
  bench::BenchOptions bench;
  std::string out, from;
  bool json_only = false;
};

bench::BenchReport load_report(const std::string& path) {
  std::ifstream in(path);
  PCNN_CHECK(in, "cannot open '" << path << "'");
  try {
    return bench::report_from_json(nlohmann::json::parse(in));
  } catch (const nlohmann::json::exception& e) {
    throw Error("'" + path + "' is not a bench.json written by pcnn bench: " + e.what());
  }
}

int run_bench_command(BenchCliOptions o) {
  o.bench.exe = bench::own_executable();
  // With --json-only stdout carries the JSON alone (a parent bench reads it); progress and
  // skipped lines go to stderr in every mode.
  auto progress = [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  };
  bench::BenchReport r;
  if (!o.from.empty()) {
    r = load_report(o.from);  // measured elsewhere (the GPU machine, say): print and plot it
  } else {
    r = bench::run_bench(o.bench, progress);
    r.command = bench::own_command_line();
    // "pcnn 0.1 (commit 2c9dbda)\n...": the version and commit `pcnn --version` prints.
    const std::string v = version_text().substr(0, version_text().find('\n'));
    const size_t open = v.find(" (commit "), close = v.rfind(')');
    if (v.rfind("pcnn ", 0) == 0 && open != std::string::npos && close > open) {
      r.version = v.substr(5, open - 5);
      r.commit = v.substr(open + 9, close - open - 9);
    }
  }
  if (o.json_only) {
    std::printf("%s\n", bench::to_json(r).dump().c_str());
    return kExitSuccess;
  }
  std::printf("\n");
  bench::print_report(stdout, r);
  if (o.out.empty()) return kExitSuccess;
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  PCNN_CHECK(!ec, "cannot create the output folder '" << o.out << "': " << ec.message());
  {
    const std::string path = o.out + "/bench.json";
    std::FILE* f = std::fopen(path.c_str(), "w");
    PCNN_CHECK(f, "cannot write '" << path << "'");
    const std::string text = bench::to_json(r).dump(2) + "\n";
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    PCNN_CHECK(std::fclose(f) == 0 && ok, "writing '" << path << "' failed");
  }
  bench::write_runs_csv(o.out + "/bench.csv", r);
  bench::write_layers_csv(o.out + "/bench_layers.csv", r);
  std::printf("\nwrote %s/bench.json, bench.csv, bench_layers.csv", o.out.c_str());
  for (const std::string& p : bench::write_bench_plots(o.out, r))
    std::printf(", %s", std::filesystem::path(p).filename().c_str());
  std::printf("\n");
  return kExitSuccess;
}
}  // namespace

Command add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchCliOptions>();
  bench::BenchOptions& b = o->bench;
  auto* sub = app.add_subcommand(
      "bench", "Time training steps, forward, backward and each layer on every backend");
  add_backend_option(*sub, b.backends);
  add_model_option(*sub, b.models);
  add_batch_option(*sub, b.batches, "batch sizes, comma-separated");
  add_threads_option(*sub, b.threads,
                     "CPU threads, or a list for a strong-scaling sweep (0 = all cores; default: 1, 2, "
                     "4, ... up to all cores, for the speedup decomposition)");
  sub->add_option("--repeat", b.policy.repeat,
                  "timed blocks per measurement (fewer, but at least 3, once --budget is spent)")
      ->check(whole_number(1, kMaxRepeat))->capture_default_str();
  sub->add_option("--warmup", b.policy.warmup, "untimed iterations before each measurement")
      ->check(whole_number(1, kMaxWarmup))->capture_default_str();
  sub->add_option("--budget", b.policy.budget_s, "seconds per measurement after which repeats stop")
      ->check(real_number<double>({0, true, kMaxBudgetSeconds, false}))->capture_default_str();
  sub->add_option("--per-layer", b.per_layer,
                  "batch sizes with a per-layer breakdown: largest, all or none")
      ->check(one_of({"largest", "all", "none"}, "--per-layer choice"))->capture_default_str();
  add_path_option(*sub, "--data,-d", b.data_dir,
                  "data folder to draw batches from, in any format train reads (default: "
                  "synthetic images; speed does not depend on them)");
  add_data_format_option(*sub, b.data_format);
  sub->add_option("--images", b.synthetic_images, "synthetic images to draw batches from")
      ->check(whole_number(1, kMaxSyntheticImages))->capture_default_str();
  sub->add_option("--optimizer", b.optimizer,
                  "the update the timed step runs (default: adam, as pcnn train)")
      ->check(one_of({"sgd", "adam"}, "optimizer"))->capture_default_str();
  add_precision_option(*sub, b.precision,
                       "storage of activations and gradients between layers (as pcnn train)");
  sub->add_option("--seed", b.seed, "seed of weights, data and shuffling")
      ->check(whole_number(0, kMaxSeed))->capture_default_str();
  sub->add_flag("--isolate", b.isolate,
                "run each CPU backend and thread count in its own child process (always done "
                "for kokkos when --threads has several values)");
  sub->add_flag("--contention", b.contention,
                "then measure every CPU backend again while a busy process (nice 19) competes "
                "for a core, and print loaded against idle step times");
  add_path_option(*sub, "--out", o->out,
                  "write bench.json, bench.csv, bench_layers.csv and SVG graphs here");
  sub->add_flag("--json-only", o->json_only, "print only the JSON report on stdout (child runs)");
  add_path_option(*sub, "--from", o->from,
                  "measure nothing: print (and with --out, rewrite and plot) this bench.json");
  return {sub, [o] { return run_bench_command(*o); }};
}

}  // namespace pcnn::cli
