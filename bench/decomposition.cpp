// The speedup decomposition: ratios of median step times of one report.
#include "bench/decomposition.hpp"

#include "backends/registry.hpp"

namespace pcnn::bench {

namespace {
const ModelRun* find_run(const BenchReport& r, const std::string& backend, int threads,
                         const ModelRun& like) {
  for (const ModelRun& run : r.runs)
    if (run.backend == backend && run.model == like.model && run.batch == like.batch &&
        run.step.samples > 0 && run.step.median > 0 && (threads < 0 || run.threads == threads))
      return &run;
  return nullptr;
}

bool is_gpu(const ModelRun& run) {
  const BackendEntry* e = find_backend(run.backend);
  return e ? e->kind == BackendKind::Gpu : !run.host_memory;
}

double ratio(const ModelRun* slow, const ModelRun* fast) {
  return slow && fast ? slow->step.median / fast->step.median : 0;
}
double ratio_lo(const ModelRun* slow, const ModelRun* fast) {
  return slow && fast && fast->step.max > 0 ? slow->step.min / fast->step.max : 0;
}
double ratio_hi(const ModelRun* slow, const ModelRun* fast) {
  return slow && fast && fast->step.min > 0 ? slow->step.max / fast->step.min : 0;
}
}  // namespace

std::vector<int> thread_sweep(int n) {
  std::vector<int> out;
  for (int t = 1; t < n; t *= 2) out.push_back(t);
  out.push_back(n < 1 ? 1 : n);
  return out;
}

Decomposition decompose(const BenchReport& r) {
  Decomposition d;
  d.reference = reference_backend().name;
  for (const ModelRun& run : r.runs) {
    if (run.step.samples == 0 || run.step.median <= 0) continue;
    if (has_thread_count(run)) {
      const ModelRun* ref = find_run(r, d.reference, -1, run);
      const ModelRun* one = find_run(r, run.backend, 1, run);
      CpuGain g;
      g.backend = run.backend;
      g.model = run.model;
      g.batch = run.batch;
      g.threads = run.threads;
      g.algorithmic = ratio(ref, one);
      g.parallel = ratio(one, &run);
      g.efficiency = run.threads > 0 ? g.parallel / run.threads : 0;
      g.total = ratio(ref, &run);
      g.algorithmic_lo = ratio_lo(ref, one);
      g.algorithmic_hi = ratio_hi(ref, one);
      // A run against itself is 1 exactly, not the spread of its blocks against each other.
      g.parallel_lo = one == &run ? 1 : ratio_lo(one, &run);
      g.parallel_hi = one == &run ? 1 : ratio_hi(one, &run);
      d.cpu.push_back(g);
    } else if (is_gpu(run)) {
      const ModelRun* best = nullptr;
      for (const ModelRun& c : r.runs)
        if (!is_gpu(c) && c.model == run.model && c.batch == run.batch && c.step.samples > 0 &&
            c.step.median > 0 && (!best || c.step.median < best->step.median))
          best = &c;
      if (!best) continue;
      d.gpu.push_back({run.backend, run.model, run.batch, run_label(*best), ratio(best, &run),
                       ratio_lo(best, &run), ratio_hi(best, &run)});
    }
  }
  return d;
}

}  // namespace pcnn::bench
