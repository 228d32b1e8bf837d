// Figures from a BenchReport through report/svg_plot. One series per run label (backend and
// thread count), in the order the runs were made, so colours agree between figures.
#include "bench/plots.hpp"

#include <algorithm>
#include <set>

#include "bench/decomposition.hpp"
#include "report/svg_plot.hpp"

namespace pcnn::bench {

namespace {
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

std::string speedup_plot(const std::string& dir, const BenchReport& r, const std::string& model) {
  const auto runs = runs_of(r, model);
  LineChart speed, rate;
  speed.title = model + ": training-step speedup over " + r.baseline;
  rate.title = model + ": training throughput";
  speed.x_label = rate.x_label = "batch size";
  speed.y_label = "speedup (x)";
  rate.y_label = "images/s";
  speed.log_x = rate.log_x = rate.log_y = true;
  speed.x_ticks = rate.x_ticks = {r.options.batches.begin(), r.options.batches.end()};
  for (const std::string& label : labels_of(runs)) {
    Series s{label, {}, {}}, t{label, {}, {}};
    for (const ModelRun* run : runs) {
      if (run_label(*run) != label) continue;
      if (run->speedup > 0) s.x.push_back(run->batch), s.y.push_back(run->speedup);
      t.x.push_back(run->batch), t.y.push_back(run->batch / run->step.median);
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
  const std::string path = dir + "/speedup_" + model + ".svg";
  write_svg(path, fig);
  return path;
}

std::string layers_plot(const std::string& dir, const std::string& model, int batch,
                        const std::vector<const ModelRun*>& runs) {
  BarChart fwd, bwd;
  fwd.title = model + ", batch " + std::to_string(batch) + ": forward per layer";
  bwd.title = model + ", batch " + std::to_string(batch) + ": backward per layer";
  fwd.y_label = bwd.y_label = "ms (median, includes one synchronize)";
  fwd.log_y = bwd.log_y = true;
  for (const LayerTime& l : runs.front()->layers) {
    fwd.groups.push_back(std::to_string(l.index) + " " + l.layer);
    bwd.groups.push_back(fwd.groups.back());
  }
  bwd.groups.push_back("loss + gradient");
  bwd.groups.push_back("SGD update");
  for (const ModelRun* run : runs) {
    Series f{run_label(*run), {}, {}}, b{run_label(*run), {}, {}};
    for (const LayerTime& l : run->layers) {
      f.y.push_back(l.forward.median * 1e3);
      b.y.push_back(l.backward.median * 1e3);
    }
    b.y.push_back(run->loss.median * 1e3);
    b.y.push_back(run->update.median * 1e3);
    fwd.series.push_back(f);
    bwd.series.push_back(b);
  }
  Figure fig;
  fig.bars = {fwd, bwd};
  const std::string path = dir + "/layers_" + model + "_b" + std::to_string(batch) + ".svg";
  write_svg(path, fig);
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
    for (const CpuGain& g : d.cpu)
      if (g.model == model && g.backend == b && g.threads == 1 && g.algorithmic > 0)
        s.x.push_back(g.batch), s.y.push_back(g.algorithmic);
    if (!s.x.empty()) alg.series.push_back(s);
  }
  const auto gpus = backends_of(d.gpu, model);
  LineChart gpu;
  gpu.title = model + ": GPU gain: " + one_or(gpus, "each GPU backend") + " / fastest CPU run";
  gpu.x_label = "batch size";
  gpu.y_label = "fastest CPU run's step / GPU step (x)";
  for (const std::string& b : gpus) {
    Series s{b + " / fastest CPU run", {}, {}};
    for (const GpuGain& g : d.gpu)
      if (g.model == model && g.backend == b) s.x.push_back(g.batch), s.y.push_back(g.gain);
    gpu.series.push_back(s);
  }
  for (LineChart* c : {&alg, &gpu}) {
    c->log_x = true;
    c->y_from_zero = true;
    c->x_ticks = {r.options.batches.begin(), r.options.batches.end()};
    if (!c->series.empty()) fig.lines.push_back(*c);
  }
  if (fig.lines.empty()) return "";
  const std::string path = dir + "/gains_" + model + ".svg";
  write_svg(path, fig);
  return path;
}

// Strong scaling: the parallel gain (N threads of a backend over one thread of it) with the
// ideal line, and the parallel efficiency (gain / N), per CPU backend and batch size.
std::string scaling_plot(const std::string& dir, const Decomposition& d, const std::string& model) {
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
      Series s{b + ", batch " + std::to_string(batch), {}, {}}, e = s;
      for (const CpuGain& g : d.cpu)
        if (g.model == model && g.backend == b && g.batch == batch && g.parallel > 0) {
          s.x.push_back(g.threads), s.y.push_back(g.parallel);
          e.x.push_back(g.threads), e.y.push_back(g.efficiency);
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
  for (int n : threads) {
    ideal.x.push_back(n), ideal.y.push_back(n);
    full.x.push_back(n), full.y.push_back(1);
  }
  gain.series.push_back(ideal);
  eff.series.push_back(full);
  gain.x_ticks = eff.x_ticks = {threads.begin(), threads.end()};
  Figure fig;
  fig.lines = {gain, eff};
  const std::string path = dir + "/scaling_" + model + ".svg";
  write_svg(path, fig);
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
      if (!with_layers.empty()) written.push_back(layers_plot(dir, model, batch, with_layers));
    }
    for (const std::string& p : {gains_plot(dir, r, d, model), scaling_plot(dir, d, model)})
      if (!p.empty()) written.push_back(p);
  }
  return written;
}

}  // namespace pcnn::bench
