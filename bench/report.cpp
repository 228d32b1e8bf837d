// Tables, JSON and CSV of a BenchReport. Every time printed has its arithmetic rate beside it.
#include "bench/report.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "backends/registry.hpp"
#include "core/check.hpp"

namespace pcnn::bench {

using nlohmann::json;

double gflops(double flops, double seconds) {
  return flops > 0 && seconds > 0 ? flops / seconds * 1e-9 : 0;
}

namespace {
// ---- terminal ----------------------------------------------------------------------------
std::string ms(const Summary& s) {
  char b[32];
  if (!s.samples) return "-";
  std::snprintf(b, sizeof b, "%.3f", s.median * 1e3);
  return b;
}
std::string rate(double flops, const Summary& s) {
  char b[32];
  const double g = s.samples ? gflops(flops, s.median) : 0;
  if (g <= 0) return "-";
  std::snprintf(b, sizeof b, "%.2f", g);
  return b;
}
std::string spread(const Summary& s) {
  char b[64];
  std::snprintf(b, sizeof b, "[%.3f..%.3f]", s.min * 1e3, s.max * 1e3);
  return b;
}

void print_runs(std::FILE* out, const BenchReport& r) {
  std::fprintf(out, "%-20s %-11s %5s %10s %-21s %10s %8s %9s %8s %9s %8s %8s %9s\n", "backend",
               "model", "batch", "step ms", "[min..max]", "images/s", "GFLOP/s", "fwd ms",
               "GFLOP/s", "bwd ms", "GFLOP/s", "speedup", "peak MiB");
  for (const ModelRun& run : r.runs) {
    char sp[32] = "-";
    if (run.speedup > 0) std::snprintf(sp, sizeof sp, "%.2fx", run.speedup);
    char peak[32] = "-";  // bench.json files from before memory was counted have none
    if (run.peak_bytes > 0) std::snprintf(peak, sizeof peak, "%.1f", double(run.peak_bytes) / (1 << 20));
    std::fprintf(out, "%-20s %-11s %5d %10s %-21s %10.0f %8s %9s %8s %9s %8s %8s %9s\n",
                 run_label(run).c_str(), run.model.c_str(), run.batch, ms(run.step).c_str(),
                 spread(run.step).c_str(), run.batch / run.step.median,
                 rate(run.forward_flops + run.backward_flops, run.step).c_str(),
                 ms(run.forward).c_str(), rate(run.forward_flops, run.forward).c_str(),
                 ms(run.backward).c_str(), rate(run.backward_flops, run.backward).c_str(), sp,
                 peak);
  }
}

void print_head_to_head(std::FILE* out, const std::vector<HeadToHead>& pairs) {
  if (pairs.empty()) return;
  std::fprintf(out, "\nhead to head (same run; ratio = the other's step time / this one's)\n");
  std::fprintf(out, "%-8s %-8s %-11s %5s %12s %12s %8s\n", "backend", "versus", "model", "batch",
               "images/s", "versus", "ratio");
  for (const HeadToHead& h : pairs)
    std::fprintf(out, "%-8s %-8s %-11s %5d %12.0f %12.0f %7.2fx\n", h.backend.c_str(),
                 h.versus.c_str(), h.model.c_str(), h.batch, h.images_per_s,
                 h.versus_images_per_s, h.ratio);
}

std::string times(double v) {
  char b[32] = "-";
  if (v > 0) std::snprintf(b, sizeof b, "%.2fx", v);
  return b;
}

void print_decomposition(std::FILE* out, const Decomposition& d) {
  if (!d.cpu.empty()) {
    std::fprintf(out, "\nspeedup decomposition (same run): algorithmic = %s step / the backend's "
                 "at 1 thread; parallel = the backend at 1 thread / at N threads; efficiency = "
                 "parallel / N; total = algorithmic x parallel = %s step / this row's\n",
                 d.reference.c_str(), d.reference.c_str());
    std::fprintf(out, "%-8s %-11s %5s %7s %11s %9s %10s %8s\n", "backend", "model", "batch",
                 "threads", "algorithmic", "parallel", "efficiency", "total");
    for (const CpuGain& g : d.cpu) {
      char eff[16] = "-";
      if (g.parallel > 0) std::snprintf(eff, sizeof eff, "%.0f%%", g.efficiency * 100);
      std::fprintf(out, "%-8s %-11s %5d %7d %11s %9s %10s %8s\n", g.backend.c_str(),
                   g.model.c_str(), g.batch, g.threads, times(g.algorithmic).c_str(),
                   times(g.parallel).c_str(), eff, times(g.total).c_str());
    }
  }
  if (d.gpu.empty()) return;
  std::fprintf(out, "\nGPU gain (same run) = step of the fastest CPU run at the same model and "
               "batch / the GPU backend's\n");
  std::fprintf(out, "%-8s %-11s %5s %-22s %9s\n", "backend", "model", "batch", "fastest CPU run",
               "gain");
  for (const GpuGain& g : d.gpu)
    std::fprintf(out, "%-8s %-11s %5d %-22s %9s\n", g.backend.c_str(), g.model.c_str(), g.batch,
                 g.versus.c_str(), times(g.gain).c_str());
}

// Each CPU run beside its loaded twin (same label, model, batch), and serial's loaded step as
// the bar a parallel backend must stay under.
void print_contention(std::FILE* out, const BenchReport& r) {
  if (r.loaded.empty()) return;
  std::fprintf(out, "\nunder contention: the same runs while %s ran (medians; loaded / idle: > 1 "
               "is slower; vs %s: %s's loaded step / this loaded step, > 1 is faster)\n",
               r.competitor.c_str(), reference_backend().name.c_str(),
               reference_backend().name.c_str());
  std::fprintf(out, "%-20s %-11s %5s %10s %10s %-21s %12s %8s\n", "backend", "model", "batch",
               "idle ms", "loaded ms", "[min..max]", "loaded/idle",
               ("vs " + reference_backend().name).c_str());
  for (const ModelRun& l : r.loaded) {
    const ModelRun* idle = nullptr;
    const ModelRun* ref = nullptr;
    for (const ModelRun& run : r.runs)
      if (run_label(run) == run_label(l) && run.model == l.model && run.batch == l.batch) idle = &run;
    for (const ModelRun& run : r.loaded)
      if (run.backend == reference_backend().name && run.model == l.model && run.batch == l.batch)
        ref = &run;
    std::fprintf(out, "%-20s %-11s %5d %10s %10s %-21s %12s %8s\n", run_label(l).c_str(),
                 l.model.c_str(), l.batch, idle ? ms(idle->step).c_str() : "-",
                 ms(l.step).c_str(), spread(l.step).c_str(),
                 idle ? times(l.step.median / idle->step.median).c_str() : "-",
                 ref ? times(ref->step.median / l.step.median).c_str() : "-");
  }
}

void print_layers(std::FILE* out, const BenchReport& r, const std::string& model, int batch) {
  std::fprintf(out, "\nper-layer: %s, batch %d (each call timed alone between two synchronizes, "
               "so every number includes one)\n", model.c_str(), batch);
  std::fprintf(out, "%-40s %-20s %9s %8s %9s %8s\n", "layer", "backend", "fwd ms", "GFLOP/s",
               "bwd ms", "GFLOP/s");
  std::vector<const ModelRun*> runs;
  for (const ModelRun& run : r.runs)
    if (run.model == model && run.batch == batch && !run.layers.empty()) runs.push_back(&run);
  const size_t L = runs.front()->layers.size();
  for (size_t i = 0; i < L; ++i)
    for (size_t k = 0; k < runs.size(); ++k) {
      const LayerTime& l = runs[k]->layers[i];
      const std::string name = k ? "" : std::to_string(l.index) + " " + l.layer;
      std::fprintf(out, "%-40s %-20s %9s %8s %9s %8s\n", name.c_str(),
                   run_label(*runs[k]).c_str(), ms(l.forward).c_str(),
                   rate(l.forward_flops, l.forward).c_str(), ms(l.backward).c_str(),
                   rate(l.backward_flops, l.backward).c_str());
    }
  // The two parts of backward(+update) that are no layer: shown in the bwd column.
  const std::pair<const char*, Summary ModelRun::*> parts[] = {
      {"loss (softmax cross-entropy + gradient)", &ModelRun::loss}, {"optimizer update", &ModelRun::update}};
  for (const auto& [part, member] : parts)
    for (size_t k = 0; k < runs.size(); ++k)
      std::fprintf(out, "%-40s %-20s %9s %8s %9s %8s\n", k ? "" : part,
                   run_label(*runs[k]).c_str(), "-", "-", ms(runs[k]->*member).c_str(), "-");
}

// ---- JSON --------------------------------------------------------------------------------
json summary_json(const Summary& s) {
  return {{"median_s", s.median}, {"min_s", s.min},       {"max_s", s.max},   {"q1_s", s.q1},
          {"q3_s", s.q3},         {"samples", s.samples}, {"block", s.block}};
}
Summary summary_from(const json& j) {
  Summary s;
  s.median = j.at("median_s"); s.min = j.at("min_s"); s.max = j.at("max_s");
  s.q1 = j.at("q1_s"); s.q3 = j.at("q3_s");
  s.samples = j.at("samples"); s.block = j.at("block");
  return s;
}

json run_json(const ModelRun& r) {
  json layers = json::array();
  for (const LayerTime& l : r.layers)
    layers.push_back({{"index", l.index},
                      {"layer", l.layer},
                      {"forward", summary_json(l.forward)},
                      {"backward", summary_json(l.backward)},
                      {"flops", {{"forward", l.forward_flops}, {"backward", l.backward_flops}}},
                      {"gflops", {{"forward", gflops(l.forward_flops, l.forward.median)},
                                  {"backward", gflops(l.backward_flops, l.backward.median)}}}});
  json j = {{"backend", r.backend},
            {"label", run_label(r)},
            {"device", r.device},
            {"threads", r.threads},
            {"host_memory", r.host_memory},
            {"model", r.model},
            {"batch", r.batch},
            {"step", summary_json(r.step)},
            {"forward", summary_json(r.forward)},
            {"backward", summary_json(r.backward)},
            {"flops", {{"forward", r.forward_flops}, {"backward", r.backward_flops}}},
            {"images_per_s", r.batch / r.step.median},
            {"gflops", {{"step", gflops(r.forward_flops + r.backward_flops, r.step.median)},
                        {"forward", gflops(r.forward_flops, r.forward.median)},
                        {"backward", gflops(r.backward_flops, r.backward.median)}}},
            {"speedup", r.speedup > 0 ? json(r.speedup) : json(nullptr)},
            {"memory", {{"peak_bytes", r.peak_bytes},
                        {"device_in_use_bytes",
                         r.device_in_use_bytes >= 0 ? json(r.device_in_use_bytes) : json(nullptr)},
                        {"activation_bytes_per_image", r.activation_bytes_per_image}}}};
  if (!r.layers.empty()) {
    j["layers"] = layers;
    j["loss"] = summary_json(r.loss);
    j["update"] = summary_json(r.update);
  }
  return j;
}

ModelRun run_from(const json& j) {
  ModelRun r;
  r.backend = j.at("backend"); r.device = j.at("device"); r.threads = j.at("threads");
  r.host_memory = j.at("host_memory"); r.model = j.at("model"); r.batch = j.at("batch");
  r.step = summary_from(j.at("step"));
  r.forward = summary_from(j.at("forward"));
  r.backward = summary_from(j.at("backward"));
  r.forward_flops = j.at("flops").at("forward");
  r.backward_flops = j.at("flops").at("backward");
  if (!j.at("speedup").is_null()) r.speedup = j.at("speedup");
  if (j.contains("memory")) {  // absent from bench.json files written before it was counted
    const json& m = j.at("memory");
    r.peak_bytes = m.at("peak_bytes");
    if (!m.at("device_in_use_bytes").is_null()) r.device_in_use_bytes = m.at("device_in_use_bytes");
    r.activation_bytes_per_image = m.at("activation_bytes_per_image");
  }
  if (j.contains("layers")) {
    for (const json& l : j.at("layers")) {
      LayerTime t;
      t.index = l.at("index"); t.layer = l.at("layer");
      t.forward = summary_from(l.at("forward"));
      t.backward = summary_from(l.at("backward"));
      t.forward_flops = l.at("flops").at("forward");
      t.backward_flops = l.at("flops").at("backward");
      r.layers.push_back(t);
    }
    r.loss = summary_from(j.at("loss"));
    r.update = summary_from(j.at("update"));
  }
  return r;
}

// ---- CSV ---------------------------------------------------------------------------------
// Every double with the digits it needs to read back exactly (the default 6 wrote 1.33286e+07).
constexpr int kCsvDigits = std::numeric_limits<double>::max_digits10;

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
std::string csv_times(const Summary& s) {
  std::ostringstream os;
  os.precision(kCsvDigits);
  os << s.median * 1e3 << "," << s.min * 1e3 << "," << s.max * 1e3 << "," << s.q1 * 1e3 << ","
     << s.q3 * 1e3;
  return os.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  PCNN_CHECK(out, "cannot write '" << path << "'");
  out << text;
  PCNN_CHECK(out, "writing '" << path << "' failed");
}
}  // namespace

std::vector<HeadToHead> head_to_head(const BenchReport& r) {
  // The fastest run of a backend at one model and batch size (nullptr if it did not run).
  auto best = [&](const std::string& backend, const std::string& model, int batch) {
    const ModelRun* b = nullptr;
    for (const ModelRun& run : r.runs)
      if (run.backend == backend && run.model == model && run.batch == batch &&
          run.step.samples && (!b || run.step.median < b->step.median))
        b = &run;
    return b;
  };
  std::vector<std::pair<std::string, int>> cases;  // (model, batch) in the order they ran
  for (const ModelRun& run : r.runs)
    if (std::find(cases.begin(), cases.end(), std::make_pair(run.model, run.batch)) == cases.end())
      cases.emplace_back(run.model, run.batch);
  std::vector<HeadToHead> out;
  for (const BackendEntry& a : known_backends())  // the pairs the registry entries name
    for (const std::string& b : a.compared_with)
      for (const auto& [model, batch] : cases) {
        const ModelRun* x = best(a.name, model, batch);
        const ModelRun* y = best(b, model, batch);
        if (!x || !y) continue;
        out.push_back({a.name, b, model, batch, batch / x->step.median, batch / y->step.median,
                       y->step.median / x->step.median});
      }
  return out;
}

void print_report(std::FILE* out, const BenchReport& r) {
  std::fprintf(out, "host: %s (%d hardware threads", r.host_cpu.c_str(), r.host_threads);
  if (r.topology.physical_cores > 0)
    std::fprintf(out, ", %d physical cores in %d package%s, from %s", r.topology.physical_cores,
                 r.topology.packages, r.topology.packages == 1 ? "" : "s",
                 r.topology.source.c_str());
  std::fprintf(out, "), %s", r.date.c_str());
  if (r.loads_before.size() == 3)
    std::fprintf(out, ", load average %.2f %.2f %.2f", r.loads_before[0], r.loads_before[1],
                 r.loads_before[2]);
  std::fprintf(out, "\n");
  if (!r.version.empty() || !r.build.compiler.empty())
    std::fprintf(out, "build: pcnn %s (commit %s), %s, %s, flags: %s\n",
                 r.version.empty() ? "?" : r.version.c_str(),
                 r.commit.empty() ? "?" : r.commit.c_str(), r.build.compiler.c_str(),
                 r.build.build_type.empty() ? "no build type" : r.build.build_type.c_str(),
                 r.build.flags.c_str());
  std::set<std::string> seen;
  for (const ModelRun& run : r.runs)
    if (seen.insert(run_label(run)).second)
      std::fprintf(out, "  %-20s runs on %s\n", run_label(run).c_str(), run.device.c_str());
  std::fprintf(out, "data: %s\n", r.data.c_str());
  // A busy machine slows parallel runs most (a descheduled thread stalls every barrier).
  if (r.load_before >= r.host_threads)
    std::fprintf(out, "warning: the load average was %.1f on %d hardware threads before the run: "
                 "other processes competed for the CPUs, parallel timings suffer most\n",
                 r.load_before, r.host_threads);
  if (r.options.precision != "fp32")
    std::fprintf(out, "activations and their gradients stored in %s between layers\n",
                 r.options.precision.c_str());
  std::fprintf(out, "step = Trainer::step() (gather, forward, loss, backward, %s update); fwd = "
               "Model::forward; bwd = loss gradient + backward + update.\n"
               "Times are medians over timed blocks, [min..max] their spread; GFLOP/s from the "
               "counted FLOPs; speedup = step time of %s / this row's.\n\n",
               r.options.optimizer.c_str(),
               r.baseline.empty() ? "(none)" : r.baseline.c_str());
  print_runs(out, r);
  print_head_to_head(out, head_to_head(r));
  print_decomposition(out, decompose(r));
  print_contention(out, r);
  std::set<std::pair<std::string, int>> done;
  for (const ModelRun& run : r.runs)
    if (!run.layers.empty() && done.insert({run.model, run.batch}).second)
      print_layers(out, r, run.model, run.batch);
  for (const Skipped& s : r.skipped)
    std::fprintf(out, "skipped: %s: %s\n", s.backend.c_str(), s.reason.c_str());
}

json to_json(const BenchReport& r) {
  const BenchOptions& o = r.options;
  json skipped = json::array(), runs = json::array();
  for (const Skipped& s : r.skipped) skipped.push_back({{"backend", s.backend}, {"reason", s.reason}});
  for (const ModelRun& run : r.runs) runs.push_back(run_json(run));
  // Where each backend ran, once each: the GPU backends' names carry the CUDA driver and
  // runtime versions, cudnn's its library versions (Backend::device_name()).
  json devices = json::array();
  std::set<std::string> seen_devices;
  for (const ModelRun& run : r.runs)
    if (seen_devices.insert(run_label(run)).second)
      devices.push_back({{"label", run_label(run)}, {"backend", run.backend}, {"device", run.device}});
  json loaded = json::array();
  for (const ModelRun& run : r.loaded) loaded.push_back(run_json(run));
  json pairs = json::array();  // derived from runs (recomputed, not read back, by --from)
  for (const HeadToHead& h : head_to_head(r))
    pairs.push_back({{"backend", h.backend}, {"versus", h.versus}, {"model", h.model},
                     {"batch", h.batch}, {"images_per_s", h.images_per_s},
                     {"versus_images_per_s", h.versus_images_per_s}, {"ratio", h.ratio}});
  const Decomposition d = decompose(r);  // derived too
  json cpu_gains = json::array(), gpu_gains = json::array();
  auto ratio_or_null = [](double v) { return v > 0 ? json(v) : json(nullptr); };
  for (const CpuGain& g : d.cpu)
    cpu_gains.push_back({{"backend", g.backend}, {"model", g.model}, {"batch", g.batch},
                         {"threads", g.threads}, {"algorithmic_gain", ratio_or_null(g.algorithmic)},
                         {"parallel_gain", ratio_or_null(g.parallel)},
                         {"parallel_efficiency", ratio_or_null(g.efficiency)},
                         {"total_gain", ratio_or_null(g.total)}});
  for (const GpuGain& g : d.gpu)
    gpu_gains.push_back({{"backend", g.backend}, {"model", g.model}, {"batch", g.batch},
                         {"versus", g.versus}, {"gain", g.gain}});
  const json decomposition = {
      {"reference", d.reference},
      {"notes", {"algorithmic_gain = reference step / the backend's step at 1 thread",
                 "parallel_gain = the backend's step at 1 thread / at 'threads' threads",
                 "parallel_efficiency = parallel_gain / threads",
                 "total_gain = algorithmic_gain x parallel_gain = reference step / this one's",
                 "gpu gain = step of the fastest CPU run ('versus') / the GPU backend's",
                 "all of one run, medians of the step time; null: a run it needs is missing"}},
      {"cpu", cpu_gains},
      {"gpu", gpu_gains}};
  return {{"tool", "pcnn bench"},
          {"date", r.date},
          {"command", r.command},
          {"pcnn", {{"version", r.version}, {"commit", r.commit}}},
          {"build", {{"compiler", r.build.compiler}, {"flags", r.build.flags},
                     {"build_type", r.build.build_type}}},
          {"host", {{"cpu", r.host_cpu}, {"hardware_threads", r.host_threads},
                    {"physical_cores", r.topology.physical_cores},
                    {"packages", r.topology.packages},
                    {"topology_from", r.topology.source},
                    {"load_average_before", r.load_before}, {"load_average_after", r.load_after},
                    {"load_averages_before_1_5_15_min", r.loads_before}}},
          {"compiled_backends", r.compiled},
          {"devices", devices},
          {"skipped", skipped},
          {"data", r.data},
          {"speedup_baseline", r.baseline},
          {"settings", {{"models", o.models}, {"batch_sizes", o.batches},
                        {"backends", o.backends}, {"threads", o.threads},
                        {"repeat", o.policy.repeat}, {"min_repeat", o.policy.min_repeat},
                        {"warmup", o.policy.warmup}, {"budget_s", o.policy.budget_s},
                        {"per_layer", o.per_layer}, {"seed", o.seed},
                        {"contention", o.contention},
                        {"optimizer", o.optimizer},
                        {"precision", o.precision},
                        {"synthetic_images", o.synthetic_images}, {"data_dir", o.data_dir}}},
          {"notes", {"times in seconds per iteration: median, min, max, quartiles over 'samples' "
                     "timed blocks of 'block' iterations, each block ending in a synchronize",
                     "per-layer times each include one synchronize (every layer is timed alone)",
                     "backward = loss gradient + Model::backward + the optimizer's update (settings.optimizer)",
                     "speedup = baseline step time / this run's, same model and batch size"}},
          {"head_to_head", pairs},
          {"contention", {{"competitor", r.competitor}, {"runs", loaded}}},
          {"speedup_decomposition", decomposition},
          {"runs", runs}};
}

BenchReport report_from_json(const json& j) {
  BenchReport r;
  r.date = j.at("date"); r.command = j.at("command");
  const json& host = j.at("host");
  r.host_cpu = host.at("cpu"); r.host_threads = host.at("hardware_threads");
  r.load_before = host.at("load_average_before"); r.load_after = host.at("load_average_after");
  // Files from before issue 14 have none of these.
  r.topology.physical_cores = host.value("physical_cores", 0);
  r.topology.packages = host.value("packages", 0);
  r.topology.hardware_threads = r.host_threads;
  r.topology.source = host.value("topology_from", "");
  r.loads_before = host.value("load_averages_before_1_5_15_min", std::vector<double>{});
  if (j.contains("pcnn")) {
    r.version = j.at("pcnn").value("version", "");
    r.commit = j.at("pcnn").value("commit", "");
  }
  if (j.contains("build")) {
    r.build.compiler = j.at("build").value("compiler", "");
    r.build.flags = j.at("build").value("flags", "");
    r.build.build_type = j.at("build").value("build_type", "");
  }
  r.compiled = j.at("compiled_backends").get<std::vector<std::string>>();
  for (const json& s : j.at("skipped")) r.skipped.push_back({s.at("backend"), s.at("reason")});
  r.data = j.at("data");
  r.baseline = j.at("speedup_baseline");
  const json& s = j.at("settings");
  BenchOptions& o = r.options;
  o.models = s.at("models").get<std::vector<std::string>>();
  o.batches = s.at("batch_sizes").get<std::vector<int>>();
  o.backends = s.at("backends").get<std::vector<std::string>>();
  o.threads = s.at("threads").get<std::vector<int>>();
  o.policy.repeat = s.at("repeat"); o.policy.min_repeat = s.at("min_repeat");
  o.policy.warmup = s.at("warmup"); o.policy.budget_s = s.at("budget_s");
  o.per_layer = s.at("per_layer"); o.seed = s.at("seed");
  o.optimizer = s.value("optimizer", "sgd");  // files from before the option timed SGD
  o.precision = s.value("precision", "fp32");  // and before 16-bit activations, fp32
  o.synthetic_images = s.at("synthetic_images"); o.data_dir = s.at("data_dir");
  for (const json& run : j.at("runs")) r.runs.push_back(run_from(run));
  o.contention = s.value("contention", false);  // files from before --contention have none
  if (j.contains("contention")) {
    r.competitor = j.at("contention").at("competitor");
    for (const json& run : j.at("contention").at("runs")) r.loaded.push_back(run_from(run));
  }
  return r;
}

void write_runs_csv(const std::string& path, const BenchReport& r) {
  std::ostringstream os;
  os.precision(kCsvDigits);
  os << "backend,label,device,threads,model,batch";
  for (const char* p : {"step", "forward", "backward"})
    for (const char* c : {"median_ms", "min_ms", "max_ms", "q1_ms", "q3_ms"}) os << "," << p << "_" << c;
  os << ",step_samples,step_block,images_per_s,step_gflops,forward_gflops,backward_gflops,"
        "forward_flops,backward_flops,speedup\n";
  for (const ModelRun& run : r.runs) {
    os << csv_field(run.backend) << "," << csv_field(run_label(run)) << ","
       << csv_field(run.device) << "," << run.threads << "," << csv_field(run.model) << ","
       << run.batch << "," << csv_times(run.step) << "," << csv_times(run.forward) << ","
       << csv_times(run.backward) << "," << run.step.samples << "," << run.step.block << ","
       << run.batch / run.step.median << ","
       << gflops(run.forward_flops + run.backward_flops, run.step.median) << ","
       << gflops(run.forward_flops, run.forward.median) << ","
       << gflops(run.backward_flops, run.backward.median) << "," << run.forward_flops << ","
       << run.backward_flops << ",";
    if (run.speedup > 0) os << run.speedup;
    os << "\n";
  }
  write_file(path, os.str());
}

void write_layers_csv(const std::string& path, const BenchReport& r) {
  std::ostringstream os;
  os.precision(kCsvDigits);
  os << "backend,label,threads,model,batch,index,layer,forward_median_ms,forward_min_ms,"
        "forward_max_ms,forward_gflops,backward_median_ms,backward_min_ms,backward_max_ms,"
        "backward_gflops\n";
  for (const ModelRun& run : r.runs) {
    if (run.layers.empty()) continue;
    const std::string head = csv_field(run.backend) + "," + csv_field(run_label(run)) + "," +
                             std::to_string(run.threads) + "," + csv_field(run.model) + "," +
                             std::to_string(run.batch) + ",";
    for (const LayerTime& l : run.layers)
      os << head << l.index << "," << csv_field(l.layer) << "," << l.forward.median * 1e3 << ","
         << l.forward.min * 1e3 << "," << l.forward.max * 1e3 << ","
         << gflops(l.forward_flops, l.forward.median) << "," << l.backward.median * 1e3 << ","
         << l.backward.min * 1e3 << "," << l.backward.max * 1e3 << ","
         << gflops(l.backward_flops, l.backward.median) << "\n";
    for (const Summary* s : {&run.loss, &run.update})  // no index, no forward, no FLOPs
      os << head << "," << (s == &run.loss ? "loss" : "update") << ",,,,," << s->median * 1e3
         << "," << s->min * 1e3 << "," << s->max * 1e3 << ",\n";
  }
  write_file(path, os.str());
}

}  // namespace pcnn::bench
