// Figures from a BenchReport through report/svg_plot. One series per run label (backend and
// thread count), in the order the runs were made, so colours agree between figures.
#include "bench/plots.hpp"

#include <algorithm>
#include <map>
#include <set>

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

// Strong scaling: the same problem on more threads, against the same backend's fewest threads.
std::string scaling_plot(const std::string& dir, const BenchReport& r, const std::string& model) {
  std::map<std::string, std::vector<const ModelRun*>> by_backend;  // CPU backends with threads
  for (const ModelRun* run : runs_of(r, model))
    if (has_thread_count(*run)) by_backend[run->backend].push_back(run);
  LineChart speed, rate;
  speed.title = model + ": strong scaling (speedup over fewest threads)";
  rate.title = model + ": throughput against threads";
  speed.x_label = rate.x_label = "threads";
  speed.y_label = "speedup (x)";
  rate.y_label = "images/s";
  // Log-log: thread counts usually double, and ideal scaling is then the diagonal.
  speed.log_x = speed.log_y = rate.log_x = rate.log_y = true;
  std::set<int> threads;
  for (const auto& [backend, runs] : by_backend) {
    std::set<int> counts;
    for (const ModelRun* run : runs) counts.insert(run->threads);
    if (counts.size() < 2) continue;
    for (int batch : r.options.batches) {
      Series s{backend + ", batch " + std::to_string(batch), {}, {}}, t = s;
      double base = 0;
      for (int n : counts)
        for (const ModelRun* run : runs)
          if (run->threads == n && run->batch == batch) {
            if (!base) base = run->step.median;
            s.x.push_back(n), s.y.push_back(base / run->step.median);
            t.x.push_back(n), t.y.push_back(run->batch / run->step.median);
            threads.insert(n);
          }
      if (s.x.size() < 2) continue;
      speed.series.push_back(s);
      rate.series.push_back(t);
    }
  }
  if (speed.series.empty()) return "";
  Series ideal{"ideal (linear in threads)", {}, {}, true};
  for (int n : threads) ideal.x.push_back(n), ideal.y.push_back(double(n) / *threads.begin());
  speed.series.push_back(ideal);
  speed.x_ticks = rate.x_ticks = {threads.begin(), threads.end()};
  Figure fig;
  fig.lines = {speed, rate};
  const std::string path = dir + "/scaling_" + model + ".svg";
  write_svg(path, fig);
  return path;
}
}  // namespace

std::vector<std::string> write_bench_plots(const std::string& dir, const BenchReport& r) {
  std::vector<std::string> written;
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
    const std::string s = scaling_plot(dir, r, model);
    if (!s.empty()) written.push_back(s);
  }
  return written;
}

}  // namespace pcnn::bench
