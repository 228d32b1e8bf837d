// The replica machinery: building one device's training state, the update, and the gradient
// all-reduce that makes several replicas train like one device with the whole batch.
#include "train/replica.hpp"

#include "core/augment_math.hpp"
#include "core/check.hpp"

namespace pcnn {

BatchLayout layout_for(const Model& m, int batch, const Dataset& d) {
  const FeatureShape in = m.input_shape();
  PCNN_CHECK(in.c == d.channels,
             "model '" << m.spec().name << "' takes " << in.c << " input channel"
                       << (in.c == 1 ? "" : "s") << ", the data set has " << d.channels
                       << " (a model spec whose \"input\" is [" << d.channels << ", H, W] fits it)");
  PCNN_CHECK(in.h >= d.height && in.w >= d.width,
             "model '" << m.spec().name << "' takes " << in.h << "x" << in.w
                       << " inputs, the data set has " << d.height << "x" << d.width
                       << " images");
  return {batch, in.h, in.w};
}

Trainer::Replica::Replica(Backend& b, Model& m, const Dataset& train, const Normalization& norm,
                          const TrainConfig& cfg, int shard_batch, int rank,
                          bool separate_update_counter)
    : be(b), model(m), data(b, train, norm), optimizer(b, m, cfg.optimizer),
      layout(layout_for(m, shard_batch, train)),
      x(b, size_t(shard_batch) * m.input_shape().size()), metrics(b, kMetricCount),
      labels(b, size_t(shard_batch)), data_counter(b, 1) {
  data_counter.upload({rank});
  // fp16 keeps small gradients above its subnormals with a dynamic loss scale; bf16 has fp32's
  // range and needs none.
  if (m.precision() == Precision::F16) optimizer.set_loss_scale(kInitialLossScale, true);
  // The step's check reads the step slots: they start at zero even when step() runs before
  // any train_epoch (tests, the bench).
  b.fill(metrics.get(), 0.f, kMetricCount);
  if (cfg.augment.any()) {
    const FeatureShape in = m.input_shape();
    gathered = DeviceArray<float>(b, size_t(shard_batch) * in.size());
    if (cfg.augment.elastic)
      augment_scratch = DeviceArray<float>(
          b, size_t(shard_batch) * kElasticScratchPlanes * size_t(in.h) * in.w);
    // A black pixel, normalised as the gather does (core/batch_math.hpp).
    augment_fill = DeviceArray<float>(b, size_t(in.c));
    std::vector<float> fill(size_t(in.c));
    for (int c = 0; c < in.c; ++c) fill[size_t(c)] = -norm.mean_of(c) * norm.inv_std_of(c);
    augment_fill.upload(fill);
  }
  if (separate_update_counter) {  // the update runs after the all-reduce, off the data counter
    update_counter = DeviceArray<int32_t>(b, 1);
    update_counter.upload({0});
  }
}

// The check first: a step whose gradients or loss are not finite sets the skip flag the update
// reads on the device. With several replicas each checks its own copy of the all-reduced
// gradients, so all skip alike: a non-finite loss makes its replica's gradients NaN through the
// softmax (core/loss_math.hpp), and the all-reduce spreads them (only logits past ~1e38 apart
// give an infinite loss with finite gradients, which one replica alone would skip).
void Trainer::update(Replica& r) {
  r.be.check_step(r.model.param_count(), r.model.grads(), r.step_for_update(), r.metrics.get(),
                  r.optimizer.hyper());
  r.optimizer.step(r.step_for_update());
  if (r.update_counter.get()) r.be.increment(r.update_counter.get());
}

void Trainer::allreduce_and_update() {
  std::vector<float*> grads;
  for (auto& r : replicas_) grads.push_back(r->model.grads());
  collective_->allreduce_mean(grads, replicas_[0]->model.param_count());
  for (auto& r : replicas_) update(*r);
}

}  // namespace pcnn
