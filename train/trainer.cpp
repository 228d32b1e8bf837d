// The epoch loop (with its progress reports) and the trainer's set-up. One step is in
// train/step.cpp, the replicas and their all-reduce in train/replica.cpp.
#include "train/trainer.hpp"

#include <chrono>
#include <cmath>

#include "core/check.hpp"
#include "train/replica.hpp"

namespace pcnn {

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

void Trainer::synchronize() {
  for (auto& r : replicas_) r->be.synchronize();
}

bool Trainer::using_graph() const { return replicas_[0]->graph_ready; }

void Trainer::on_progress(ProgressCallback report, double every_s, int every_steps) {
  report_ = std::move(report);
  report_every_s_ = every_s;
  report_every_steps_ = every_steps;
}

float Trainer::learning_rate(int epoch) const {
  return cfg_.optimizer.lr * std::pow(cfg_.lr_decay, epoch);
}

StepProgress Trainer::progress(int epoch, int step) const {
  StepProgress p;
  p.epoch = epoch + 1;
  p.step = step;
  p.steps = steps_per_epoch_;
  p.images = int64_t(step) * cfg_.batch;
  for (auto& r : replicas_) {  // download synchronises
    const std::vector<float> m = r->metrics.download();
    p.loss_sum += m[kMetricLossSum];
    p.correct += m[kMetricCorrect];
  }
  return p;
}

EpochStats Trainer::train_epoch(int epoch) {
  using clock = std::chrono::steady_clock;
  const float lr = learning_rate(epoch);
  int first = 0;  // steps of this epoch done before a restore: its metrics were restored too
  if (restored_) {
    PCNN_CHECK(epoch == global_step_ / steps_per_epoch_,
               "the restored state is in epoch " << global_step_ / steps_per_epoch_ + 1
                                                 << ", not " << epoch + 1);
    first = int(global_step_ % steps_per_epoch_);
    restored_ = false;
  }
  for (auto& r : replicas_) {
    if (epoch > 0) r->optimizer.set_learning_rate(lr);
    if (first == 0) r->be.fill(r->metrics.get(), 0.f, kMetricCount);
  }
  synchronize();
  const auto t0 = clock::now();
  auto last_report = t0;
  int s = first;
  while (s < steps_per_epoch_) {
    step();
    ++s;
    if (report_) {
      const bool by_steps = report_every_steps_ > 0 && s % report_every_steps_ == 0;
      const bool by_time = report_every_s_ > 0 &&
          std::chrono::duration<double>(clock::now() - last_report).count() >= report_every_s_;
      if (by_steps || by_time) {
        StepProgress p = progress(epoch, s);
        last_report = clock::now();  // after the download: the steps counted have all finished
        p.seconds = std::chrono::duration<double>(last_report - t0).count();
        report_(p);
      }
    }
    if (step_hook_ && !step_hook_(epoch, s)) break;
  }
  const StepProgress end = progress(epoch, s);
  const double seconds = std::chrono::duration<double>(clock::now() - t0).count();
  EpochStats st;
  st.epoch = epoch + 1;
  st.learning_rate = lr;
  st.stopped = s < steps_per_epoch_;
  const double n = double(end.images);
  st.train_loss = end.loss_sum / n;
  st.train_accuracy = end.correct / n;
  st.images_per_s = double(s - first) * cfg_.batch / seconds;  // this process's steps only
  PCNN_CHECK(std::isfinite(st.train_loss),
             "training diverged in epoch " << epoch + 1 << " (loss is " << st.train_loss
                                           << "): try a smaller --lr");
  return st;
}

}  // namespace pcnn
