// The epoch loop (with its progress reports) and the trainer's set-up. One step is in
// train/step.cpp, the replicas and their all-reduce in train/replica.cpp.
#include "train/trainer.hpp"

#include <chrono>
#include <cmath>

#include "core/check.hpp"
#include "core/step_check_math.hpp"
#include "train/replica.hpp"

namespace pcnn {

void check_augment(const AugmentConfig& a) {
  const auto in = [](const char* name, double v, double lo, double hi) {
    PCNN_CHECK(v >= lo && v <= hi, "augmentation: " << name << " " << v << " is outside ["
                                                    << lo << ", " << hi << "]");
  };
  in("elastic alpha", a.elastic_alpha, 0, kMaxElasticAlpha);
  in("elastic sigma", a.elastic_sigma, 1e-6, kMaxElasticSigma);
  in("affine rotation", a.affine_rotate, 0, kMaxAffineRotate);
  in("affine scale", a.affine_scale, 0, kMaxAffineScale);
  in("affine shear", a.affine_shear, 0, kMaxAffineShear);
  in("crop padding", a.crop_pad, 0, kMaxCropPad);
  in("flip probability", a.flip_probability, 0, 1);
}

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
  check_augment(cfg.augment);
  PCNN_CHECK(
      cfg.lr_schedule != LrSchedule::Cosine || cfg.epochs >= 1,
      "a cosine learning-rate schedule needs the run's epochs (at least 1), got " << cfg.epochs);
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
  if (cfg_.lr_schedule == LrSchedule::Cosine) {
    const double pi = 3.14159265358979323846;
    return float(cfg_.optimizer.lr * 0.5 * (1.0 + std::cos(pi * epoch / cfg_.epochs)));
  }
  return cfg_.optimizer.lr * std::pow(cfg_.lr_decay, epoch);
}

StepProgress Trainer::progress(int epoch, int step) const {
  StepProgress p;
  p.epoch = epoch + 1;
  p.step = step;
  p.steps = steps_per_epoch_;
  for (size_t i = 0; i < replicas_.size(); ++i) {  // download synchronises
    const std::vector<float> m = replicas_[i]->metrics.download();
    p.loss_sum += m[kMetricLossSum];
    p.correct += m[kMetricCorrect];
    // Every replica checks the same all-reduced gradients, so they skip alike: replica 0
    // speaks for all.
    if (i > 0) continue;
    p.skipped_steps = int64_t(m[kMetricBadSteps]);
    p.first_fault.step = unpack_u32(&m[kMetricFirstBadStep]);
    p.first_fault.grad_index = int64_t(unpack_u32(&m[kMetricFirstBadGrad])) - 1;
    if (replicas_[i]->model.precision() == Precision::F16)
      p.loss_scale = replicas_[i]->optimizer.loss_scale_state()[0];
  }
  p.images = int64_t(step - p.skipped_steps) * cfg_.batch;  // the loss sums cover these only
  return p;
}

// Under a dynamic loss scale (fp16) a step that overflowed is how the scale finds its level:
// a fault only once the scale can go no lower.
bool Trainer::new_fault(const StepProgress& p) const {
  return cfg_.on_nan == NanPolicy::Stop && p.skipped_steps > faults_reported_ &&
         p.loss_scale <= kMinLossScale;
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
  if (first == 0) faults_reported_ = 0;  // else restore() set it
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
        // A fault mid-epoch stops here; one in the last step is left to the epoch's end.
        if (new_fault(p) && s < steps_per_epoch_) break;
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
  st.skipped_steps = end.skipped_steps;
  st.first_fault = end.first_fault;
  st.fault_stop = new_fault(end);
  st.loss_scale = end.loss_scale;
  // Over the steps kept; NaN when every step was skipped.
  const double n = double(end.images);
  st.train_loss = n > 0 ? end.loss_sum / n : std::nan("");
  st.train_accuracy = n > 0 ? end.correct / n : std::nan("");
  st.images_per_s = double(s - first) * cfg_.batch / seconds;  // this process's steps only
  return st;
}

}  // namespace pcnn
