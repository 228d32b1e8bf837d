// The model measurements. The training step runs through Trainer::step() exactly as `pcnn train`
// does (so GPU backends replay it as a graph); the phase and per-layer timings drive the same
// Model directly on one gathered batch.
#include "bench/model_bench.hpp"

#include <algorithm>

#include "core/check.hpp"
#include "backends/device_array.hpp"
#include "models/model.hpp"
#include "train/optimizer.hpp"
#include "train/trainer.hpp"

namespace pcnn::bench {

namespace {
// The optimizer of the timed update (sgd: with momentum and weight decay, every term computed).
OptimizerConfig bench_optimizer(const std::string& kind, float lr) {
  OptimizerConfig o;
  o.kind = kind;
  o.lr = lr;
  o.momentum = 0.9f;
  o.weight_decay = 5e-4f;
  return o;
}

// One batch of inputs and labels on the device, for the phase and per-layer timings.
struct FixedBatch {
  DeviceData data;
  DeviceArray<float> x, metrics;
  DeviceArray<int32_t> y, counter;
  FixedBatch(Backend& be, const Model& m, int batch, const Dataset& d, const Normalization& n)
      : data(be, d, n),
        x(be, size_t(batch) * m.input_shape().size()),
        metrics(be, kMetricCount),
        y(be, size_t(batch)),
        counter(be, 1) {
    be.gather_batch(data.view(), 0, {batch, m.input_shape().h, m.input_shape().w}, x.get(),
                    y.get());
    be.fill(metrics.get(), 0.f, kMetricCount);
    counter.upload({0});
  }
  // The forward of a training step (what the bench times), its randomness keyed to counter.
  PassContext training() const { return {true, counter.get(), 0}; }
};

// Per-layer breakdown: blocks of whole passes, each layer's call timed between two synchronises
// and summed over the block's passes.
void per_layer(Backend& be, Model& model, Optimizer& opt, FixedBatch& fb, int N, int block,
               const RepeatPolicy& p, ModelRun& run) {
  const size_t L = model.layer_count();
  // Segments: forward of each layer, loss, backward of each layer, update.
  const size_t kLoss = L, kBack = L + 1, kUpdate = 2 * L + 1, S = 2 * L + 2;
  std::vector<std::vector<double>> samples(S);
  auto pass = [&](std::vector<double>* acc) {
    double t = synced_now_s(be);
    auto lap = [&](size_t seg) {
      const double u = synced_now_s(be);
      if (acc) (*acc)[seg] += u - t;
      t = u;
    };
    for (size_t i = 0; i < L; ++i) model.forward_layer(i, N, fb.x.get(), fb.training()), lap(i);
    model.loss_and_gradient(N, fb.y.get(), fb.metrics.get(), opt.hyper() + kHyperLossScale);
    lap(kLoss);
    for (size_t i = L; i-- > 0;) model.backward_layer(i, N), lap(kBack + i);
    opt.step(fb.counter.get());
    lap(kUpdate);
  };
  for (int i = 0; i < std::max(1, p.warmup); ++i) pass(nullptr);
  for (RepeatLoop loop(p); loop.more();) {
    std::vector<double> acc(S, 0.0);
    const double t0 = now_s();
    for (int k = 0; k < block; ++k) pass(&acc);
    loop.add(now_s() - t0);
    for (size_t s = 0; s < S; ++s) samples[s].push_back(acc[s] / block);
  }
  for (size_t i = 0; i < L; ++i) {
    const Layer& l = model.layer(i);
    if (l.is_view()) continue;
    LayerTime lt;
    lt.index = int(i);
    lt.layer = l.describe();
    lt.forward = summarize(samples[i], block);
    lt.backward = summarize(samples[kBack + i], block);
    lt.forward_flops = l.forward_flops(N);
    lt.backward_flops = l.backward_flops(N);
    run.layers.push_back(lt);
  }
  run.loss = summarize(samples[kLoss], block);
  run.update = summarize(samples[kUpdate], block);
}
}  // namespace

ModelRun bench_model(Backend& be, int threads, const ModelSpec& spec, int batch,
                     const Dataset& data, const ModelBenchConfig& cfg) {
  PCNN_CHECK(batch >= 1, "batch size must be at least 1, got " << batch);
  PCNN_CHECK(data.count >= batch, "the bench data set has " << data.count
                                                             << " images, fewer than batch " << batch);
  ModelRun run;
  run.backend = be.name();
  run.device = be.device_name();
  run.model = spec.name;
  run.threads = threads;
  run.host_memory = be.is_host_memory();
  run.batch = batch;

  const Normalization norm = normalization_of(data);

  be.reset_peak_memory();
  run.activation_bytes_per_image =
      int64_t(activation_bytes_per_image(spec, true, cfg.precision, be.stages_16bit()));
  Model model(be, spec, batch, cfg.seed, true, cfg.precision);
  run.forward_flops = model.forward_flops(batch);
  run.backward_flops = model.backward_flops(batch);

  // The full step, as training runs it. A graph backend captures on its second step, so it gets
  // two warm-up steps at least: the timed ones are all replays.
  {
    TrainConfig tc;
    tc.batch = batch;
    tc.seed = uint32_t(cfg.seed);
    tc.optimizer = bench_optimizer(cfg.optimizer, cfg.optimizer == "adam" ? 2e-3f : 0.01f);
    Trainer trainer(be, model, data, norm, tc);
    RepeatPolicy p = cfg.policy;
    if (be.supports_graphs()) p.warmup = std::max(p.warmup, 2);
    run.step = time_blocks(be, [&] { trainer.step(); }, p);
    run.device_in_use_bytes = be.device_memory_in_use();
  }

  // Phases on one fixed batch. A learning rate of 1e-20 (the optimizer refuses 0) leaves the
  // parameters as they are in float while the update still does all its arithmetic, so
  // repeating the same gradient over and over cannot drift them anywhere slow (inf, NaN).
  FixedBatch fb(be, model, batch, data, norm);
  Optimizer opt(be, model, bench_optimizer(cfg.optimizer, 1e-20f));
  run.forward = time_blocks(be, [&] { model.forward(batch, fb.x.get(), fb.training()); }, cfg.policy);
  run.backward = time_blocks(be, [&] {
    model.loss_and_gradient(batch, fb.y.get(), fb.metrics.get(), opt.hyper() + kHyperLossScale);
    model.backward_layers(batch);
    opt.step(fb.counter.get());
  }, cfg.policy);

  if (cfg.per_layer) per_layer(be, model, opt, fb, batch, run.step.block, cfg.policy, run);
  run.peak_bytes = int64_t(be.memory_usage().peak);
  return run;
}

}  // namespace pcnn::bench
