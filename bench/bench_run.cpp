// The bench loop: validate the names, then backend by backend (thread count by thread count for
// CPU backends), model by model, batch by batch, each on a freshly built model.
#include "bench/bench_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <tuple>
#include <nlohmann/json.hpp>

#include "backends/registry.hpp"
#include "bench/child.hpp"
#include "bench/competitor.hpp"
#include "bench/decomposition.hpp"
#include "data/data_source.hpp"
#include "bench/host_info.hpp"
#include "core/check.hpp"
#include "report/number_format.hpp"
#include "backends/unavailable_reason.hpp"
#include "tests/synthetic.hpp"

namespace pcnn::bench {

namespace {
bool compiled_in(const std::string& name) {
  for (const auto& e : compiled_backends())
    if (e.name == name) return true;
  return false;
}

// The reference first (it is the baseline and the slowest), then the registry's order.
std::vector<std::string> default_backends() {
  std::vector<std::string> out = {reference_backend().name};
  for (const auto& e : compiled_backends())
    if (e.name != out.front()) out.push_back(e.name);
  return out;
}

std::string progress_line(const ModelRun& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-20s %-11s batch %5d: step %9.3f ms, %9.0f images/s (%d blocks of %d)%s",
                run_label(r).c_str(), r.model.c_str(), r.batch, r.step.median * 1e3,
                r.batch / r.step.median, r.step.samples, r.step.block,
                r.layers.empty() ? "" : ", per-layer done");
  return buf;
}

ModelSpec bench_spec(const std::string& name) { return load_model_spec(name); }

// What "all cores" (threads 0) means to an OpenMP runtime: OMP_NUM_THREADS where it is set.
int default_threads(int host_threads) {
  const char* env = std::getenv("OMP_NUM_THREADS");
  const int n = env ? std::atoi(env) : 0;
  return n > 0 ? n : host_threads;
}

bool per_layer_at(const BenchOptions& o, int batch) {
  if (o.per_layer == "all") return true;
  if (o.per_layer == "none") return false;
  return batch == *std::max_element(o.batches.begin(), o.batches.end());
}

// The synthetic images a model is benched on without --data: 28x28 grey ones for grey inputs of
// 28x28 to 32x32 (padded into the input, as MNIST-format data would be), otherwise pictures of
// the model's own input shape (as many channels as the data formats have at most).
std::tuple<int, int, int> synthetic_shape(const ModelSpec& s) {
  const bool mnist_like =
      s.in_c == 1 && s.in_h >= 28 && s.in_h <= 32 && s.in_w >= 28 && s.in_w <= 32;
  if (mnist_like || s.in_c > kMaxDataChannels) return {1, 28, 28};
  return {s.in_c, s.in_h, s.in_w};
}

// One data set for each distinct shape key among the models (key_of(spec)), made by make(spec)
// for the first model with that key and shared by the others; in the models' order.
template <class KeyOf, class Make>
std::vector<std::shared_ptr<const Dataset>> once_per_shape(const std::vector<ModelSpec>& specs,
                                                           KeyOf key_of, Make make) {
  std::map<std::tuple<int, int, int>, std::shared_ptr<const Dataset>> made;
  std::vector<std::shared_ptr<const Dataset>> out;
  for (const ModelSpec& s : specs) {
    std::shared_ptr<const Dataset>& d = made[key_of(s)];
    if (!d) d = std::make_shared<const Dataset>(make(s));
    out.push_back(d);
  }
  return out;
}

// The images each model (by index) is benched on. A folder of images is converted to each
// model's input, as `pcnn train` converts it, and read once per distinct input shape; IDX and
// CIFAR files have a shape of their own, read once for all models.
std::vector<std::shared_ptr<const Dataset>> bench_data(const BenchOptions& o,
                                                       const std::vector<ModelSpec>& specs,
                                                       std::string& what) {
  if (o.data_dir.empty()) {
    // Two batches at least; otherwise --images, as far as they fit in 1 GiB of host memory.
    const int largest = *std::max_element(o.batches.begin(), o.batches.end());
    auto out = once_per_shape(specs, synthetic_shape, [&](const ModelSpec& s) {
      const auto [c, h, w] = synthetic_shape(s);
      const size_t bytes = size_t(c) * h * w;
      const int count = std::max<int>(
          2 * largest,
          int(std::min<size_t>(size_t(o.synthetic_images), (size_t(1) << 30) / bytes)));
      what += (what.empty() ? "" : ", ") + std::to_string(count) + " synthetic " +
              (c == 1 ? "" : std::to_string(c) + "x") + std::to_string(h) + "x" +
              std::to_string(w) + " images";
      return test::synthetic_planes(count, c, h, w, o.seed);
    });
    what += " (tests/synthetic.hpp)";
    return out;
  }
  DataFormat format = parse_data_format(o.data_format);
  if (format == DataFormat::Detect) format = detect_data_format(o.data_dir);
  std::string shapes;
  const auto key_of = [&](const ModelSpec& s) {
    return format == DataFormat::Folder ? std::make_tuple(s.in_c, s.in_h, s.in_w)
                                        : std::make_tuple(0, 0, 0);
  };
  auto out = once_per_shape(specs, key_of, [&](const ModelSpec& s) {
    Dataset d = load_dataset(o.data_dir, format, {s.in_c, s.in_h, s.in_w}, 256).train;
    shapes += (shapes.empty() ? "" : ", ") + std::to_string(d.channels) + "x" +
              std::to_string(d.height) + "x" + std::to_string(d.width);
    return d;
  });
  what = "training images of " + o.data_dir +
         (format == DataFormat::Folder ? " (converted to each model's input: " + shapes + ")" : "");
  return out;
}

// "[k/N]" and an ETA for progress lines. N counts every (backend, thread count, model, batch)
// asked for, and shrinks once a backend has run fewer (skipped here, or a GPU backend that ran
// once for all thread counts). A child process goes on with its parent's count, handed over
// in the environment (kCountVariable) so that its lines number on from the parent's.
constexpr const char* kCountVariable = "PCNN_BENCH_COUNT";
// The parent's prefix for the child's progress lines ("loaded: " under --contention).
constexpr const char* kTagVariable = "PCNN_BENCH_TAG";
std::string parent_tag() {
  const char* t = std::getenv(kTagVariable);
  return t ? t : "";
}

struct Countdown {
  int done = 0, total = 0;
  double start_s = now_s();  // wall clock: the same in a child process

  static double now_s() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  std::string line(const std::string& what) {
    ++done;
    const double elapsed = now_s() - start_s;
    const double eta = done < total ? elapsed / done * (total - done) : 0;
    return "[" + std::to_string(done) + "/" + std::to_string(total) + "] " + what + ", ETA " +
           duration_text(eta);
  }
  void resume_from_parent() {
    if (const char* v = std::getenv(kCountVariable))
      std::sscanf(v, "%d %d %lf", &done, &total, &start_s);
  }
  std::string for_child() const {
    return std::to_string(done) + " " + std::to_string(total) + " " + round_trip(start_s);
  }
};

// Every model and batch size on one backend object.
void bench_backend(Backend& be, int threads, const std::vector<ModelSpec>& specs,
                   const std::vector<std::shared_ptr<const Dataset>>& data, const BenchOptions& o,
                   std::vector<ModelRun>& runs, const Progress& progress, Countdown& count,
                   const std::string& tag) {
  for (size_t m = 0; m < specs.size(); ++m)
    for (int batch : o.batches) {
      const ModelSpec& spec = specs[m];
      ModelBenchConfig cfg;
      cfg.policy = o.policy;
      cfg.per_layer = per_layer_at(o, batch);
      cfg.seed = o.seed;
      cfg.optimizer = o.optimizer;
      cfg.precision = *find_precision(o.precision);
      runs.push_back(bench_model(be, threads, spec, batch, *data[m], cfg));
      progress(count.line(tag + parent_tag() + progress_line(runs.back())));
    }
}

void validate(const BenchOptions& o, const std::vector<std::string>& backends) {
  PCNN_CHECK(!o.models.empty(), "no models to bench");
  PCNN_CHECK(!o.batches.empty(), "no batch sizes to bench");
  for (int b : o.batches) PCNN_CHECK(b >= 1, "batch sizes must be at least 1, got " << b);
  for (int t : o.threads) PCNN_CHECK(t >= 0, "thread counts must be at least 0, got " << t);
  PCNN_CHECK(o.policy.repeat >= 1, "--repeat must be at least 1");
  PCNN_CHECK(o.policy.warmup >= 1, "--warmup must be at least 1 (warm-up is never timed)");
  PCNN_CHECK(o.policy.budget_s > 0, "--budget must be positive");
  PCNN_CHECK(o.per_layer == "largest" || o.per_layer == "all" || o.per_layer == "none",
             "--per-layer must be largest, all or none, got '" << o.per_layer << "'");
  for (const std::string& b : backends)
    if (!compiled_in(b)) make_backend(b);  // throws the registry's "not compiled in" / unknown
}
}  // namespace

bool has_thread_count(const ModelRun& r) {
  const BackendEntry* e = find_backend(r.backend);
  return r.host_memory && !(e && e->sequential);
}

std::string run_label(const ModelRun& r) {
  if (!has_thread_count(r)) return r.backend;
  return r.backend + ", " + std::to_string(r.threads) + (r.threads == 1 ? " thread" : " threads");
}

bool needs_process_per_thread_count(const std::string& backend) {
  return backend_entry(backend).one_setting_per_process;
}

BenchReport run_bench(const BenchOptions& opts, const Progress& progress) {
  BenchOptions o = opts;
  if (o.backends.empty()) o.backends = default_backends();
  if (o.threads.empty()) o.threads = thread_sweep(default_threads(host_cpu_threads()));
  validate(o, o.backends);
  std::vector<ModelSpec> specs;
  for (const std::string& m : o.models) specs.push_back(bench_spec(m));

  BenchReport r;
  r.date = utc_date_iso();
  r.host_cpu = host_cpu_model();
  r.host_threads = host_cpu_threads();
  r.load_before = host_load_average();
  r.loads_before = host_load_averages();
  r.build = build_info();
  r.topology = host_topology();
  for (const auto& e : compiled_backends()) r.compiled.push_back(e.name);
  r.options = o;
  const std::vector<std::shared_ptr<const Dataset>> data = bench_data(o, specs, r.data);
  for (size_t m = 0; m < specs.size(); ++m) data[m]->check_labels(specs[m].classes);  // before any run

  auto skip = [&](const std::string& backend, const std::string& why) {
    r.skipped.push_back({backend, unavailable_reason(backend, why)});
    progress("skipped: " + backend + ": " + r.skipped.back().reason);
  };
  auto planned = [&](const std::string& backend) {  // configurations asked of one backend
    return int(specs.size() * o.batches.size()) * (backend_entry(backend).sequential ? 1 : int(o.threads.size()));
  };
  Countdown count;
  std::vector<std::string> cpu_backends;  // those --contention measures again
  for (const std::string& name : o.backends)
    if (backend_entry(name).kind == BackendKind::Cpu) cpu_backends.push_back(name);
  for (const std::string& name : o.backends) count.total += planned(name);
  if (o.contention)
    for (const std::string& name : cpu_backends) count.total += planned(name);
  count.resume_from_parent();
  auto measure = [&](const std::vector<std::string>& names, std::vector<ModelRun>& runs,
                     const std::string& tag, bool fresh_processes) {
    for (const std::string& name : names) {
      const size_t runs_before = runs.size();
      const bool sequential = backend_entry(name).sequential;
      const bool children = !o.exe.empty() && !sequential &&
                            (o.isolate || fresh_processes ||
                             (needs_process_per_thread_count(name) && o.threads.size() > 1));
      if (children) {
        for (int t : o.threads) {
          setenv(kCountVariable, count.for_child().c_str(), 1);
          setenv(kTagVariable, tag.c_str(), 1);
          BenchReport c = run_child(o.exe, child_arguments(o, name, t));
          unsetenv(kCountVariable);
          unsetenv(kTagVariable);
          count.done += int(c.runs.size());
          // The child printed its own progress and skipped lines on the shared stderr.
          r.skipped.insert(r.skipped.end(), c.skipped.begin(), c.skipped.end());
          runs.insert(runs.end(), c.runs.begin(), c.runs.end());
          // Unusable here, or a GPU whose result does not depend on the thread count.
          if (c.runs.empty() || !c.runs.front().host_memory) break;
        }
        count.total -= planned(name) - int(runs.size() - runs_before);
        continue;
      }
      // A sequential backend has one thread whatever is asked; GPU backends ignore the count.
      const std::vector<int> counts = sequential ? std::vector<int>{1} : o.threads;
      for (int t : counts) {
        BackendOptions bo;
        bo.threads = t;
        std::unique_ptr<Backend> be;
        try {
          be = make_backend(name, bo);
        } catch (const Unavailable& u) {
          if (tag.empty()) skip(name, u.what());
          break;
        }
        const int threads = !be->is_host_memory() ? 0 : t > 0 ? t : default_threads(r.host_threads);
        bench_backend(*be, threads, specs, data, o, runs, progress, count, tag);
        if (!be->is_host_memory()) break;
      }
      count.total -= planned(name) - int(runs.size() - runs_before);
    }
  };
  measure(o.backends, r.runs, "", false);
  if (o.contention) {
    // Loaded runs of parallel backends in child processes started beside the competitor: a
    // runtime that sets itself up from the load at start (libgomp's wait policy, see
    // backends/openmp) sees what a program started on a busy machine sees.
    r.competitor = competitor_description();
    progress("contention: starting " + r.competitor + ", then every CPU backend again");
    Competitor competitor;
    measure(cpu_backends, r.loaded, "loaded: ", true);
  }
  r.load_after = host_load_average();
  compute_speedups(r);
  return r;
}

void compute_speedups(BenchReport& r) {
  r.baseline.clear();
  const ModelRun* first = nullptr;
  for (const std::string& name : r.options.backends) {
    for (const ModelRun& run : r.runs)
      if (run.backend == name) { first = &run; break; }
    if (first) break;
  }
  for (const ModelRun& run : r.runs)
    if (run.backend == reference_backend().name) { first = &run; break; }
  if (!first) return;
  r.baseline = run_label(*first);
  for (ModelRun& run : r.runs) {
    run.speedup = 0;
    for (const ModelRun& b : r.runs)
      if (run_label(b) == r.baseline && b.model == run.model && b.batch == run.batch &&
          b.step.median > 0)
        run.speedup = b.step.median / run.step.median;
  }
}

}  // namespace pcnn::bench
