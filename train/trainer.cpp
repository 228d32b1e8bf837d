// The training loop (single device and data parallel) and evaluation.
#include "train/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/check.hpp"

namespace pcnn {

namespace {
BatchLayout layout_for(const Model& m, int batch, const Dataset& d) {
  const FeatureShape in = m.input_shape();
  PCNN_CHECK(in.c == 1, "model '" << m.spec().name << "' wants " << in.c
                                  << " input channels; the image data sets have 1");
  PCNN_CHECK(in.h >= d.height && in.w >= d.width,
             "model '" << m.spec().name << "' takes " << in.h << "x" << in.w
                       << " inputs, the data set has " << d.height << "x" << d.width
                       << " images");
  return {batch, in.h, in.w};
}
}  // namespace

// What one device holds: its data copy, optimizer, batch buffers and step counters.
// Replica r of R draws shard r of each global batch through a counter that starts at r and
// advances by R per step: gather_train_batch then reads positions step*B + r*b .. + b-1 of the
// epoch's shuffled order (b = B/R), exactly the samples one device would take for that step.
struct Trainer::Replica {
  Backend& be;
  Model& model;
  DeviceData data;
  Optimizer optimizer;
  BatchLayout layout;
  DeviceArray<float> x, metrics;
  DeviceArray<int32_t> labels;
  DeviceArray<int32_t> data_counter, update_counter;  // no update_counter when R == 1
  bool graph_ready = false;

  Replica(Backend& b, Model& m, const Dataset& train, const Normalization& norm,
          const TrainConfig& cfg, int shard_batch, int rank, bool separate_update_counter)
      : be(b), model(m), data(b, train, norm.mean, norm.inv_std), optimizer(b, m, cfg.optimizer),
        layout(layout_for(m, shard_batch, train)),
        x(b, size_t(shard_batch) * m.input_shape().size()), metrics(b, kMetricCount),
        labels(b, size_t(shard_batch)), data_counter(b, 1) {
    data_counter.upload({rank});
    if (separate_update_counter) {  // the update runs after the all-reduce, off the data counter
      update_counter = DeviceArray<int32_t>(b, 1);
      update_counter.upload({0});
    }
  }
  int32_t* step_for_update() {
    return update_counter.get() ? update_counter.get() : data_counter.get();
  }
};

Trainer::Trainer(Backend& be, Model& model, const Dataset& train, const Normalization& norm,
                 const TrainConfig& cfg)
    : Trainer(std::vector<Backend*>{&be}, std::vector<Model*>{&model}, nullptr, train, norm,
              cfg) {}

Trainer::Trainer(const std::vector<Backend*>& backends, const std::vector<Model*>& models,
                 Collective* collective, const Dataset& train, const Normalization& norm,
                 const TrainConfig& cfg)
    : collective_(collective), cfg_(cfg) {
  const int R = int(backends.size());
  PCNN_CHECK(R >= 1 && models.size() == backends.size(), "one model per replica is needed");
  PCNN_CHECK(R == 1 || collective, "several replicas need a collective for the all-reduce");
  PCNN_CHECK(cfg.batch % R == 0, "batch size " << cfg.batch << " does not split evenly over "
                                               << R << " replicas");
  const int shard = cfg.batch / R;
  for (Model* m : models)
    PCNN_CHECK(shard <= m->max_batch() && m->param_count() == models[0]->param_count(),
               "replica models differ or are built for batches under " << shard);
  PCNN_CHECK(cfg.batch >= 1, "batch size must be at least 1");
  PCNN_CHECK(train.count >= cfg.batch, "the training set has " << train.count
                                                               << " images, fewer than one batch");
  steps_per_epoch_ = train.count / cfg.batch;  // the last partial batch is dropped
  for (int r = 0; r < R; ++r)
    replicas_.push_back(std::make_unique<Replica>(*backends[r], *models[r], train, norm, cfg,
                                                  shard, r, R > 1 || collective));
}

Trainer::~Trainer() = default;

void Trainer::run_local_step(Replica& r, bool with_update) {
  const int N = r.layout.batch, R = replicas();
  r.be.gather_train_batch(r.data.view(), r.data_counter.get(), steps_per_epoch_ * R, cfg_.seed,
                          r.layout, r.x.get(), r.labels.get());
  r.model.forward(N, r.x.get());
  r.model.loss().forward_backward(r.be, N, r.model.logits(), r.labels.get(), r.model.dlogits(),
                                  r.metrics.get());
  r.model.backward(N);
  if (with_update) update(r);  // before the counter moves: Adam's t is read from it when R == 1
  for (int k = 0; k < R; ++k) r.be.increment(r.data_counter.get());
}

void Trainer::update(Replica& r) {
  r.optimizer.step(r.step_for_update());
  if (r.update_counter.get()) r.be.increment(r.update_counter.get());
}

void Trainer::step() {
  // Per replica, the first step runs eagerly (backends allocate scratch then); the second is
  // captured and from then on the graph is replayed. With one replica the graph holds the whole
  // step; with several it stops before the all-reduce, and the update runs after it.
  const bool single = replicas_.size() == 1 && !collective_;
  for (auto& rp : replicas_) {
    Replica& r = *rp;
    if (r.graph_ready) {
      r.be.graph_launch();
    } else if (cfg_.graphs && r.be.supports_graphs() && steps_done_ >= 1) {
      r.be.graph_begin_capture();
      run_local_step(r, single);
      r.be.graph_end_capture();
      r.graph_ready = true;
      r.be.graph_launch();
    } else {
      run_local_step(r, single);
    }
  }
  if (!single) {
    std::vector<float*> grads;
    for (auto& r : replicas_) grads.push_back(r->model.grads());
    collective_->allreduce_mean(grads, replicas_[0]->model.param_count());
    for (auto& r : replicas_) update(*r);
  }
  ++steps_done_;
}

void Trainer::synchronize() {
  for (auto& r : replicas_) r->be.synchronize();
}

bool Trainer::using_graph() const { return replicas_[0]->graph_ready; }

EpochStats Trainer::train_epoch(int epoch) {
  using clock = std::chrono::steady_clock;
  for (auto& r : replicas_) {
    if (epoch > 0)
      r->optimizer.set_learning_rate(cfg_.optimizer.lr * std::pow(cfg_.lr_decay, epoch));
    r->be.fill(r->metrics.get(), 0.f, kMetricCount);
  }
  synchronize();
  const auto t0 = clock::now();
  for (int s = 0; s < steps_per_epoch_; ++s) step();
  double loss = 0, correct = 0;
  for (auto& r : replicas_) {  // download synchronises
    const std::vector<float> m = r->metrics.download();
    loss += m[kMetricLossSum];
    correct += m[kMetricCorrect];
  }
  const double seconds = std::chrono::duration<double>(clock::now() - t0).count();
  EpochStats st;
  st.epoch = epoch + 1;
  const double n = double(steps_per_epoch_) * cfg_.batch;
  st.train_loss = loss / n;
  st.train_accuracy = correct / n;
  st.images_per_s = n / seconds;
  PCNN_CHECK(std::isfinite(st.train_loss),
             "training diverged in epoch " << epoch + 1 << " (loss is " << st.train_loss
                                           << "): try a smaller --lr");
  return st;
}

EvalResult evaluate(Backend& be, Model& model, const Dataset& data, const Normalization& norm) {
  DeviceData dd(be, data, norm.mean, norm.inv_std);
  const int batch = model.max_batch();
  const BatchLayout full = layout_for(model, batch, data);
  DeviceArray<float> x(be, size_t(batch) * model.input_shape().size());
  DeviceArray<int32_t> y(be, size_t(batch));
  DeviceArray<float> metrics(be, kMetricCount);
  be.fill(metrics.get(), 0.f, kMetricCount);
  for (int first = 0; first < data.count; first += batch) {
    BatchLayout l = full;
    l.batch = std::min(batch, data.count - first);
    be.gather_batch(dd.view(), first, l, x.get(), y.get());
    model.forward(l.batch, x.get());
    model.loss().forward_backward(be, l.batch, model.logits(), y.get(), nullptr, metrics.get());
  }
  const std::vector<float> m = metrics.download();
  EvalResult r;
  r.count = data.count;
  r.loss = m[kMetricLossSum] / data.count;
  r.accuracy = m[kMetricCorrect] / data.count;
  return r;
}

}  // namespace pcnn
