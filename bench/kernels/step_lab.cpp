// Kernel lab, whole step: training images per second of LeNet-5 and Simard-2003 on the GPU
// backends compiled in (registry kind gpu), batch 64 and 1024, through the real Model and Trainer
// (gather, forward, loss, backward, update, counter++), the step replayed as a CUDA graph
// (and once without, to show what the graph saves). Synthetic uint8 images, so no data files.
// Usage: pcnn_step_lab [BACKEND] [--models A,B] [--batches 64,1024] [--precisions fp32,bf16]
//                      [--graph-only]  (the sweep; defaults as shown, every usable GPU backend)
//        pcnn_step_lab BACKEND MODEL BATCH STEPS [PRECISION]  (one configuration, for ncu)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "backends/registry.hpp"
#include "core/check.hpp"
#include "core/precision.hpp"
#include "models/model.hpp"
#include "train/trainer.hpp"

using namespace pcnn;

namespace {

Dataset random_dataset(int count, int h, int w) {
  Dataset d;
  d.count = count; d.height = h; d.width = w;
  d.images.resize(size_t(count) * h * w);
  d.labels.resize(count);
  std::mt19937 gen(5);
  for (auto& p : d.images) p = uint8_t(gen() & 255u);
  for (auto& l : d.labels) l = int32_t(gen() % 10u);
  return d;
}

// Median images/s over `rounds` timed runs of `steps` steps each (after warm-up steps, which
// include the eager first step and the captured second one).
double images_per_s(Backend& be, const std::string& model, int batch, bool graphs,
                    const std::string& opt, int steps, int rounds,
                    Precision precision = Precision::F32) {
  const Dataset data = random_dataset(std::max(8192, batch * 8), 28, 28);
  Model m(be, load_model_spec(model), batch, 42, true, precision);  // a name or a JSON file
  TrainConfig cfg;
  cfg.batch = batch;
  cfg.graphs = graphs;
  cfg.optimizer.kind = opt;
  Trainer t(be, m, data, {0.2f, 3.f}, cfg);
  for (int i = 0; i < 10; ++i) t.step();
  t.synchronize();
  std::vector<double> rates;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) t.step();
    t.synchronize();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rates.push_back(double(steps) * batch / s);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

// `pcnn_step_lab BACKEND MODEL BATCH STEPS [PRECISION]`: one configuration, launched eagerly (no
// graph) so that a profiler (scripts/device/profile_kernels.sh) sees every kernel as its own
// launch; PRECISION fp32 (default), bf16 or fp16 as `pcnn train --precision`.
int profile_one(const std::string& backend, const std::string& model, int batch, int steps,
                const std::string& precision_given) {
  const auto precision = find_precision(precision_given);
  PCNN_CHECK(precision.has_value(),
             "step_lab: unknown precision '" + precision_given + "' (fp32, bf16, fp16)");
  auto be = make_backend(backend);
  const double ips = images_per_s(*be, model, batch, false, "sgd", steps, 1, *precision);
  std::printf("%s %s batch %d %s, %d eager steps: %.0f images/s on %s\n", backend.c_str(),
              model.c_str(), batch, precision_name(*precision), steps, ips,
              be->device_name().c_str());
  return 0;
}

namespace {

struct Sweep {
  std::vector<std::string> backends, models{"lenet5", "simard2003"}, precisions{"fp32"};
  std::vector<int> batches{64, 1024};
  bool graph_only = false;  // skip the eager runs (what the graph saves) and Adam
};

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 5 || argc == 6) {
      bool positional = true;
      for (int i = 1; i < argc; ++i) positional &= argv[i][0] != '-';
      if (positional)
        return profile_one(argv[1], argv[2], std::stoi(argv[3]), std::stoi(argv[4]),
                           argc == 6 ? argv[5] : "fp32");
    }
    Sweep w;
    CLI::App app{"pcnn_step_lab: whole training steps of the GPU backends, images/s"};
    std::string backend;
    app.add_option("backend", backend, "one backend (default: every usable GPU backend)");
    app.add_option("--models", w.models, "models, comma-separated")->delimiter(',');
    app.add_option("--batches", w.batches, "batch sizes")
        ->delimiter(',')
        ->check(CLI::Range(1, 1 << 16));
    app.add_option("--precisions", w.precisions, "fp32, bf16, fp16")
        ->delimiter(',')
        ->check(CLI::IsMember(precision_names()));
    app.add_flag("--graph-only", w.graph_only, "only graph-replayed SGD steps");
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }
    if (!backend.empty()) w.backends = {backend};
    if (w.backends.empty())
      for (const auto& e : compiled_backends())
        if (e.kind == BackendKind::Gpu && unusable_reason(e.name).empty())
          w.backends.push_back(e.name);
    PCNN_CHECK(!w.backends.empty(), "step_lab: no usable GPU backend");
    std::printf("%-8s %-11s %6s %-9s %-5s %-6s %14s %10s\n", "backend", "model", "batch",
                "precision", "opt", "graph", "images/s", "us/step");
    for (const auto& name : w.backends) {
      auto be = make_backend(name);
      if (name == w.backends.front()) std::printf("device: %s\n", be->device_name().c_str());
      for (const std::string& model : w.models)
        for (int batch : w.batches)
          for (const std::string& precision : w.precisions) {
            const Precision prec = *find_precision(precision);
            for (bool graphs : {true, false})
              for (const std::string opt : {"sgd", "adam"}) {
                if (!graphs && (opt == "adam" || w.graph_only)) continue;
                if ((model != "lenet5" || w.graph_only) && opt == "adam") continue;
                const int steps = batch <= 64 ? 400 : 100;
                const double ips = images_per_s(*be, model, batch, graphs, opt, steps, 5, prec);
                std::printf("%-8s %-11s %6d %-9s %-5s %-6s %14.0f %10.1f\n", name.c_str(),
                            model.c_str(), batch, precision_name(prec), opt.c_str(),
                            graphs ? "yes" : "no", ips, 1e6 * batch / ips);
                std::fflush(stdout);
              }
          }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "step_lab: %s\n", e.what());
    return 2;
  }
}
