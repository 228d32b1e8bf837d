// The training loop and evaluation.
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

Trainer::Trainer(Backend& be, Model& model, const Dataset& train, const Normalization& norm,
                 const TrainConfig& cfg)
    : be_(be), model_(model), cfg_(cfg), data_(be, train, norm.mean, norm.inv_std),
      optimizer_(be, model, cfg.optimizer) {
  PCNN_CHECK(cfg.batch >= 1 && cfg.batch <= model.max_batch(),
             "batch size " << cfg.batch << " is outside 1.." << model.max_batch());
  PCNN_CHECK(train.count >= cfg.batch, "the training set has " << train.count
                                                               << " images, fewer than one batch");
  steps_per_epoch_ = train.count / cfg.batch;  // the last partial batch is dropped
  layout_ = layout_for(model, cfg.batch, train);
  x_ = DeviceArray<float>(be, size_t(cfg.batch) * model.input_shape().size());
  y_ = DeviceArray<int32_t>(be, size_t(cfg.batch));
  metrics_ = DeviceArray<float>(be, kMetricCount);
  counter_ = DeviceArray<int32_t>(be, 1);
  counter_.upload({0});
}

Trainer::~Trainer() = default;

void Trainer::run_step() {
  const int N = cfg_.batch;
  be_.gather_train_batch(data_.view(), counter_.get(), steps_per_epoch_, cfg_.seed, layout_,
                         x_.get(), y_.get());
  model_.forward(N, x_.get());
  model_.loss().forward_backward(be_, N, model_.logits(), y_.get(), model_.dlogits(),
                                 metrics_.get());
  model_.backward(N);
  optimizer_.step(counter_.get());
  be_.increment(counter_.get());
}

void Trainer::step() {
  // The first step runs eagerly (backends allocate scratch then); the second is captured and
  // from then on the graph is replayed.
  if (graph_ready_) {
    be_.graph_launch();
  } else if (cfg_.graphs && be_.supports_graphs() && steps_done_ >= 1) {
    be_.graph_begin_capture();
    run_step();
    be_.graph_end_capture();
    graph_ready_ = true;
    be_.graph_launch();
  } else {
    run_step();
  }
  ++steps_done_;
}

EpochStats Trainer::train_epoch(int epoch) {
  using clock = std::chrono::steady_clock;
  if (epoch > 0) optimizer_.set_learning_rate(cfg_.optimizer.lr * std::pow(cfg_.lr_decay, epoch));
  be_.fill(metrics_.get(), 0.f, kMetricCount);
  be_.synchronize();
  const auto t0 = clock::now();
  for (int s = 0; s < steps_per_epoch_; ++s) step();
  const std::vector<float> m = metrics_.download();  // synchronises
  const double seconds = std::chrono::duration<double>(clock::now() - t0).count();
  EpochStats st;
  st.epoch = epoch + 1;
  const double n = double(steps_per_epoch_) * cfg_.batch;
  st.train_loss = m[kMetricLossSum] / n;
  st.train_accuracy = m[kMetricCorrect] / n;
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
