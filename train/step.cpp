// One training step, all of it on one screen: per replica gather -> [augment] -> forward ->
// loss -> backward -> [all-reduce] -> check -> update -> counter, captured as a graph where the
// backend can. The check (check_step) finds NaN and Inf on the device and makes the update skip
// the step; the host learns of it at the next read-back (Trainer::progress). The replica
// machinery (train/replica.cpp) and the epoch loop (train/trainer.cpp) live elsewhere.
#include "train/replica.hpp"

namespace pcnn {

// The work of one device for one step. Every call is a device launch and none waits on the
// host, so a backend can capture the whole sequence as one graph.
void Trainer::run_local_step(Replica& r, bool with_update) {
  const int N = r.layout.batch, R = replicas();
  // gather: this replica's shard of the next batch of the epoch's shuffled order, normalised
  const bool augment = cfg_.augment.any();
  r.be.gather_train_batch(r.data.view(), r.data_counter.get(), steps_per_epoch_ * R, cfg_.seed,
                          r.layout, augment ? r.gathered.get() : r.x.get(), r.labels.get());
  // augmentation: each image resampled with parameters drawn on the device from (seed, its
  // position in the run's stream of images); labels stay
  if (augment) {
    const FeatureShape in = r.model.input_shape();
    r.be.augment_batch(cfg_.augment, r.data_counter.get(), cfg_.seed, N, in.c, in.h, in.w,
                       r.augment_fill.get(), r.gathered.get(), r.augment_scratch.get(),
                       r.x.get());
  }
  r.model.forward(N, r.x.get(), PassContext{true, r.data_counter.get(), cfg_.seed});
  // loss: softmax cross-entropy and its gradient (16-bit models: stored in 16 bits, times the
  // loss scale); adds loss and correct count to the step's slots of r.metrics, which
  // check_step moves to the epoch's if the step is finite
  r.model.loss_and_gradient(N, r.labels.get(), r.metrics.get() + kMetricStepLoss,
                            r.optimizer.hyper() + kHyperLossScale);
  r.model.backward_layers(N);
  // check and update before the counter moves: Adam's t and the faulty step's number are read
  // from it when R == 1
  if (with_update) update(r);
  for (int k = 0; k < R; ++k) r.be.increment(r.data_counter.get());
}

// Records one step into the backend's graph. False when the backend reports the capture failed
// (it ended it and said why); an exception during capture that the backend cannot turn into
// such a fallback propagates unchanged.
bool Trainer::capture_local_step(Replica& r, bool with_update) {
  try {
    r.be.graph_begin_capture();
    run_local_step(r, with_update);
  } catch (...) {
    bool fell_back = false;
    try {
      fell_back = !r.be.graph_end_capture();
    } catch (...) {  // the original exception says more than the broken capture's
    }
    if (!fell_back) throw;
    return false;
  }
  return r.be.graph_end_capture();
}

void Trainer::step() {
  // With one replica the graph holds the whole step; with several it stops before the
  // all-reduce, and the update runs after it.
  const bool single = replicas_.size() == 1 && !collective_;
  for (auto& rp : replicas_) {
    Replica& r = *rp;
    if (r.graph_ready) {
      r.be.graph_launch();  // every step after the second: replay
      continue;
    }
    // The first step runs eagerly (backends allocate their scratch then); the second is the
    // one captured.
    const bool capture =
        cfg_.graphs && r.be.supports_graphs() && !r.graph_failed && steps_done_ >= 1;
    if (!capture) {
      run_local_step(r, single);
    } else if (capture_local_step(r, single)) {
      r.graph_ready = true;
      r.be.graph_launch();
    } else {
      r.graph_failed = true;  // nothing captured ran: this step, and every later one, eagerly
      run_local_step(r, single);
    }
  }
  if (!single) allreduce_and_update();
  ++steps_done_;
  ++global_step_;
}

}  // namespace pcnn
