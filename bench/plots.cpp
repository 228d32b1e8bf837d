// Figures from a BenchReport through report/svg_plot. Each backend has one colour in every
// figure (its place in the registry's list); its thread counts differ by dash, the most threads
// solid. Every figure names the machine, the date and the pcnn version under its charts, and
// draws the measured spread ([min..max] of the timed blocks) as whiskers.
#include "bench/plots.hpp"

#include <algorithm>
#include <set>

#include "backends/registry.hpp"
#include "bench/decomposition.hpp"
#include "report/svg_plot.hpp"

namespace pcnn::bench {

namespace {
// Colour-blind-safe where possible (Okabe-Ito), one per registry entry.
const char* kBackendColors[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                "#E69F00", "#56B4E9", "#000000", "#F0E442"};
}  // namespace

std::string backend_color(const std::string& backend) {
  const auto& known = known_backends();
  for (size_t i = 0; i < known.size(); ++i)
    if (known[i].name == backend)
      return kBackendColors[i % (sizeof kBackendColors / sizeof *kBackendColors)];
  return "#7f7f7f";  // a backend of another build
}

namespace {
// Dash of a series at `threads`, among the thread counts its backend ran at: the most solid,
// fewer ever shorter dashes.
std::string thread_dash(const BenchReport& r, const std::string& backend, int threads) {
  std::set<int, std::greater<int>> counts;
  for (const ModelRun& run : r.runs)
    if (run.backend == backend) counts.insert(run.threads);
  static const char* dashes[] = {"", "9,4", "5,4", "2,3", "9,3,2,3"};
  size_t rank = 0;
  for (int c : counts) {
    if (c == threads) break;
    ++rank;
  }
  return dashes[std::min(rank, sizeof dashes / sizeof *dashes - 1)];
}

// A batch-size series of one backend: dashes by the batch's place among those run.
std::string batch_dash(const BenchReport& r, int batch) {
  static const char* dashes[] = {"", "9,4", "5,4", "2,3", "9,3,2,3"};
  const auto& b = r.options.batches;
  const size_t rank = size_t(std::find(b.begin(), b.end(), batch) - b.begin());
  return dashes[std::min(rank, sizeof dashes / sizeof *dashes - 1)];
}

// Machine, date and version: what a figure found alone must say about where it comes from.
std::string footer(const BenchReport& r) {
  std::string f = "host: " + r.host_cpu + ", ";
  if (r.topology.physical_cores > 0) f += std::to_string(r.topology.physical_cores) + " cores / ";
  f += std::to_string(r.host_threads) + " hardware threads";
  std::set<std::string> gpus;
  for (const ModelRun& run : r.runs)
    if (!run.host_memory) gpus.insert(run.device);
  for (const std::string& g : gpus) f += "; " + g;
  f += " | " + r.date + " | pcnn " + (r.version.empty() ? "(version not recorded)" : r.version);
  if (!r.commit.empty()) f += " (commit " + r.commit + ")";
  if (r.load_before >= 0) {
    char load[32];
    std::snprintf(load, sizeof load, " | load %.1f", r.load_before);
    f += load;
  }
  return f;
}

void save(const std::string& path, Figure fig, const BenchReport& r) {
  fig.footer = footer(r);
  write_svg(path, fig);
}

std::vector<std::string> labels_of(const std::vector<const ModelRun*>& runs) {
  std::vector<std::string> out;
  for (const ModelRun* r : runs)
    if (std::find(out.begin(), out.end(), run_label(*r)) == out.end()) out.push_back(run_label(*r));
  return out;
}

std::vector<const ModelRun*> runs_of(const BenchReport& r, const std::string& model) {
  std::vector<const ModelRun*> out;
  for (const ModelRun& run : r.runs)
    if (run.model == model) out.push_back(&run);
  return out;
}

const ModelRun* baseline_run(const BenchReport& r, const ModelRun& like) {
  for (const ModelRun& b : r.runs)
    if (run_label(b) == r.baseline && b.model == like.model && b.batch == like.batch &&
        b.step.median > 0)
      return &b;
  return nullptr;
}

Series styled(const BenchReport& r, const ModelRun& run) {
  Series s{run_label(run), {}, {}};
  s.color = backend_color(run.backend);
  if (has_thread_count(run)) s.dash = thread_dash(r, run.backend, run.threads);
  return s;
}

std::string speedup_plot(const std::string& dir, const BenchReport& r, const std::string& model) {
  const auto runs = runs_of(r, model);
  LineChart speed, rate;
  speed.title = model + ": speedup: " + r.baseline + " step / each run's";
  rate.title = model + ": training throughput";
  speed.x_label = rate.x_label = "batch size";
  speed.y_label = r.baseline + " step time / this step time (x)";
  rate.y_label = "images/s (batch / step time)";
  speed.log_x = rate.log_x = rate.log_y = true;
  speed.x_ticks = rate.x_ticks = {r.options.batches.begin(), r.options.batches.end()};
  for (const std::string& label : labels_of(runs)) {
    Series s, t;
    for (const ModelRun* run : runs) {
      if (run_label(*run) != label) continue;
      if (s.name.empty()) s = t = styled(r, *run);
      const ModelRun* base = baseline_run(r, *run);
      if (run->speedup > 0 && base) {
        s.x.push_back(run->batch), s.y.push_back(run->speedup);
        s.lo.push_back(base->step.median / run->step.max);
        s.hi.push_back(base->step.median / run->step.min);
      }
      t.x.push_back(run->batch), t.y.push_back(run->batch / run->step.median);
      t.lo.push_back(run->batch / run->step.max), t.hi.push_back(run->batch / run->step.min);
    }
    speed.series.push_back(s);
    rate.series.push_back(t);
  }
  // GPUs next to CPUs spread speedups over orders of magnitude: then only a log axis shows both.
  double lo = 1e300, hi = 0;
  for (const Series& s : speed.series)
    for (double v : s.y) lo = std::min(lo, v), hi = std::max(hi, v);
  speed.log_y = hi > 30 * lo;
  speed.y_from_zero = !speed.log_y;
  Figure fig;
  fig.lines = {speed, rate};
  fig.title = model + ": speedup over " + r.baseline + " and throughput against batch size";
  const std::string path = dir + "/speedup_" + model + ".svg";
  save(path, fig, r);
  return path;
}

// Each layer's share of its run's per-layer total (forward, backward, loss and update summed),
// on a linear axis: backends far apart in speed stay comparable, and no bar hides on a log scale.
std::string layers_plot(const std::string& dir, const BenchReport& r, const std::string& model,
                        int batch, const std::vector<const ModelRun*>& runs) {
  BarChart fwd, bwd;
  fwd.title = model + ", batch " + std::to_string(batch) + ": forward, share per layer";
  bwd.title = model + ", batch " + std::to_string(batch) + ": backward, share per layer";
  fwd.y_label = bwd.y_label = "% of the run's per-layer total (median; whisker min..max)";
  for (const LayerTime& l : runs.front()->layers) {
    fwd.groups.push_back(std::to_string(l.index) + " " + l.layer);
    bwd.groups.push_back(fwd.groups.back());
  }
  bwd.groups.push_back("loss + gradient");
  bwd.groups.push_back("optimizer update");
  for (const ModelRun* run : runs) {
    double total = run->loss.median + run->update.median;
    for (const LayerTime& l : run->layers) total += l.forward.median + l.backward.median;
    if (total <= 0) continue;
    const double pct = 100 / total;
    Series f = styled(r, *run), b = f;
    auto add = [&](Series& s, const Summary& t) {
      s.y.push_back(t.median * pct), s.lo.push_back(t.min * pct), s.hi.push_back(t.max * pct);
    };
    for (const LayerTime& l : run->layers) add(f, l.forward), add(b, l.backward);
    add(b, run->loss);
    add(b, run->update);
    fwd.series.push_back(f);
    bwd.series.push_back(b);
  }
  Figure fig;
  fig.bars = {fwd, bwd};
  fig.title = model + ", batch " + std::to_string(batch) + ": each layer's share of the step";
  const std::string path = dir + "/layers_" + model + "_b" + std::to_string(batch) + ".svg";
  save(path, fig, r);
  return path;
}

// "openmp" when one backend is in the chart, else the generic words.
std::string one_or(const std::vector<std::string>& names, const std::string& generic) {
  return names.size() == 1 ? names.front() : generic;
}

template <class Gain>
std::vector<std::string> backends_of(const std::vector<Gain>& gains, const std::string& model) {
  std::vector<std::string> out;
  for (const Gain& g : gains)
    if (g.model == model && std::find(out.begin(), out.end(), g.backend) == out.end())
      out.push_back(g.backend);
  return out;
}

// Algorithmic gain (one thread of each CPU backend over the reference) and the GPU gain (over
// the fastest CPU run) against batch size: the two ratios that do not depend on thread count.
std::string gains_plot(const std::string& dir, const BenchReport& r, const Decomposition& d,
                       const std::string& model) {
  Figure fig;
  const auto cpu = backends_of(d.cpu, model);
  LineChart alg;
  const std::string who = one_or(cpu, "each backend");
  alg.title = model + ": algorithmic gain: " + who + " 1 thread / " + d.reference;
  alg.x_label = "batch size";
  alg.y_label = d.reference + " step / " + who + " step at 1 thread (x)";
  for (const std::string& b : cpu) {
    Series s{b + " 1 thread / " + d.reference, {}, {}};
    s.color = backend_color(b);
    for (const CpuGain& g : d.cpu)
      if (g.model == model && g.backend == b && g.threads == 1 && g.algorithmic > 0) {
        s.x.push_back(g.batch), s.y.push_back(g.algorithmic);
        s.lo.push_back(g.algorithmic_lo), s.hi.push_back(g.algorithmic_hi);
      }
    if (!s.x.empty()) alg.series.push_back(s);
  }
  const auto gpus = backends_of(d.gpu, model);
  LineChart gpu;
  gpu.title = model + ": GPU gain: " + one_or(gpus, "each GPU backend") + " / fastest CPU run";
  gpu.x_label = "batch size";
  gpu.y_label = "fastest CPU run's step / GPU step (x)";
  for (const std::string& b : gpus) {
    Series s{b + " / fastest CPU run", {}, {}};
    s.color = backend_color(b);
    for (const GpuGain& g : d.gpu)
      if (g.model == model && g.backend == b) {
        s.x.push_back(g.batch), s.y.push_back(g.gain);
        s.lo.push_back(g.gain_lo), s.hi.push_back(g.gain_hi);
      }
    gpu.series.push_back(s);
  }
  for (LineChart* c : {&alg, &gpu}) {
    c->log_x = true;
    c->y_from_zero = true;
    c->x_ticks = {r.options.batches.begin(), r.options.batches.end()};
    if (!c->series.empty()) fig.lines.push_back(*c);
  }
  if (fig.lines.empty()) return "";
  fig.title = model + ": algorithmic gain and GPU gain against batch size";
  const std::string path = dir + "/gains_" + model + ".svg";
  save(path, fig, r);
  return path;
}

// Strong scaling: the parallel gain (N threads of a backend over one thread of it) with the
// ideal line, and the parallel efficiency (gain / N), per CPU backend and batch size.
std::string scaling_plot(const std::string& dir, const BenchReport& r, const Decomposition& d,
                         const std::string& model) {
  LineChart gain, eff;
  std::set<int> threads;
  std::vector<std::string> names;
  for (const std::string& b : backends_of(d.cpu, model)) {
    std::vector<int> batches;
    for (const CpuGain& g : d.cpu)
      if (g.model == model && g.backend == b &&
          std::find(batches.begin(), batches.end(), g.batch) == batches.end())
        batches.push_back(g.batch);
    for (int batch : batches) {
      Series s{b + ", batch " + std::to_string(batch), {}, {}};
      s.color = backend_color(b);
      s.dash = batch_dash(r, batch);
      Series e = s;
      for (const CpuGain& g : d.cpu)
        if (g.model == model && g.backend == b && g.batch == batch && g.parallel > 0) {
          s.x.push_back(g.threads), s.y.push_back(g.parallel);
          s.lo.push_back(g.parallel_lo), s.hi.push_back(g.parallel_hi);
          e.x.push_back(g.threads), e.y.push_back(g.efficiency);
          e.lo.push_back(g.parallel_lo / g.threads), e.hi.push_back(g.parallel_hi / g.threads);
          threads.insert(g.threads);
        }
      if (s.x.size() < 2) continue;
      gain.series.push_back(s);
      eff.series.push_back(e);
      if (std::find(names.begin(), names.end(), b) == names.end()) names.push_back(b);
    }
  }
  if (gain.series.empty()) return "";
  const std::string who = one_or(names, "each backend");
  gain.title = model + ": parallel gain: " + who + " N threads / " + who + " 1 thread";
  gain.y_label = who + " step at 1 thread / at N threads (x)";
  eff.title = model + ": parallel efficiency: parallel gain / N";
  eff.y_label = "parallel gain / N (1 = linear scaling)";
  gain.x_label = eff.x_label = "threads (N)";
  // Log-log: thread counts double, and ideal scaling is then the diagonal.
  gain.log_x = gain.log_y = eff.log_x = true;
  eff.y_from_zero = true;
  Series ideal{"ideal (gain = N)", {}, {}, true}, full{"ideal (efficiency 1)", {}, {}, true};
  ideal.color = full.color = "#888888";
  for (int n : threads) {
    ideal.x.push_back(n), ideal.y.push_back(n);
    full.x.push_back(n), full.y.push_back(1);
  }
  gain.series.push_back(ideal);
  eff.series.push_back(full);
  gain.x_ticks = eff.x_ticks = {threads.begin(), threads.end()};
  Figure fig;
  fig.lines = {gain, eff};
  fig.title = model + ": parallel gain and efficiency against threads";
  const std::string path = dir + "/scaling_" + model + ".svg";
  save(path, fig, r);
  return path;
}
}  // namespace

std::vector<std::string> write_bench_plots(const std::string& dir, const BenchReport& r) {
  std::vector<std::string> written;
  const Decomposition d = decompose(r);
  // Model names as the runs have them (a JSON spec file's name is the spec's, not the path).
  std::vector<std::string> models;
  for (const ModelRun& run : r.runs)
    if (std::find(models.begin(), models.end(), run.model) == models.end()) models.push_back(run.model);
  for (const std::string& model : models) {
    written.push_back(speedup_plot(dir, r, model));
    for (int batch : r.options.batches) {
      std::vector<const ModelRun*> with_layers;
      for (const ModelRun* run : runs_of(r, model))
        if (run->batch == batch && !run->layers.empty()) with_layers.push_back(run);
      if (!with_layers.empty()) written.push_back(layers_plot(dir, r, model, batch, with_layers));
    }
    for (const std::string& p : {gains_plot(dir, r, d, model), scaling_plot(dir, r, d, model)})
      if (!p.empty()) written.push_back(p);
  }
  return written;
}

}  // namespace pcnn::bench
