// The training loop: the data set resident on the device, batches drawn there, one step =
// gather, forward, loss, backward, update, counter++ — captured once as a graph where the
// backend can, and read back only once per epoch (loss and correct count).
//
// Data parallelism: with several replicas (one backend and one identical model per device),
// each takes its shard of every global batch, gradients are averaged by a Collective, and every
// replica applies the same update — the same training as one replica with the whole batch.
#pragma once

#include <memory>
#include <vector>

#include "backends/collective.hpp"
#include "data/dataset.hpp"
#include "models/model.hpp"
#include "train/optimizer.hpp"

namespace pcnn {

struct TrainConfig {
  int epochs = 10;
  int batch = 64;          // global batch: split evenly across replicas
  uint32_t seed = 1;
  OptimizerConfig optimizer;
  float lr_decay = 1.f;    // learning rate multiplied by this after every epoch
  bool graphs = true;      // replay the step as a graph when the backend supports it
};

struct EpochStats {
  int epoch = 0;
  double train_loss = 0, train_accuracy = 0, test_accuracy = 0, test_loss = 0;
  double images_per_s = 0;  // training images over the epoch's training time
  double elapsed_s = 0;     // since training began
};

struct EvalResult {
  double loss = 0, accuracy = 0;
  int count = 0;
};

// Normalisation shared by training, evaluation and saved models.
struct Normalization {
  float mean = 0.f, inv_std = 1.f;
};

class Trainer {
 public:
  // One device.
  Trainer(Backend& be, Model& model, const Dataset& train, const Normalization& norm,
          const TrainConfig& cfg);
  // Several replicas: models[r] lives on backends[r], all built from the same spec and seed.
  Trainer(const std::vector<Backend*>& backends, const std::vector<Model*>& models,
          Collective* collective, const Dataset& train, const Normalization& norm,
          const TrainConfig& cfg);
  ~Trainer();

  int steps_per_epoch() const { return steps_per_epoch_; }
  int replicas() const { return int(replicas_.size()); }
  // Runs one epoch of training steps; returns loss and accuracy on the training batches.
  EpochStats train_epoch(int epoch);
  // One training step of every replica (public for tests and the bench).
  void step();
  // Waits for all launched work on every replica.
  void synchronize();
  bool using_graph() const;

 private:
  struct Replica;
  void run_local_step(Replica& r, bool with_update);
  void update(Replica& r);
  std::vector<std::unique_ptr<Replica>> replicas_;
  Collective* collective_ = nullptr;
  TrainConfig cfg_;
  int steps_per_epoch_ = 0;
  int steps_done_ = 0;
};

// Accuracy and mean loss of the model on a whole data set, in batches of up to model.max_batch().
EvalResult evaluate(Backend& be, Model& model, const Dataset& data, const Normalization& norm);

}  // namespace pcnn
