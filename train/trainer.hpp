// The training loop: the data set resident on the device, batches drawn there, one step =
// gather, forward, loss, backward, update, counter++ — captured once as a graph where the
// backend can, and read back only once per epoch (loss and correct count).
#pragma once

#include <functional>
#include <memory>

#include "data/dataset.hpp"
#include "models/model.hpp"
#include "train/optimizer.hpp"

namespace pcnn {

struct TrainConfig {
  int epochs = 10;
  int batch = 64;
  uint32_t seed = 1;
  OptimizerConfig optimizer;
  float lr_decay = 1.f;  // learning rate multiplied by this after every epoch
  bool graphs = true;    // replay the step as a graph when the backend supports it
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
  Trainer(Backend& be, Model& model, const Dataset& train, const Normalization& norm,
          const TrainConfig& cfg);
  ~Trainer();
  int steps_per_epoch() const { return steps_per_epoch_; }
  // Runs one epoch of training steps; returns loss and accuracy on the training batches.
  EpochStats train_epoch(int epoch);
  // One training step (public for tests and the bench).
  void step();
  bool using_graph() const { return graph_ready_; }

 private:
  void run_step();
  Backend& be_;
  Model& model_;
  TrainConfig cfg_;
  DeviceData data_;
  Optimizer optimizer_;
  int steps_per_epoch_;
  BatchLayout layout_;
  DeviceArray<float> x_, metrics_;
  DeviceArray<int32_t> y_, counter_;
  int steps_done_ = 0;
  bool graph_ready_ = false;
};

// Accuracy and mean loss of the model on a whole data set, in batches of up to model.max_batch().
EvalResult evaluate(Backend& be, Model& model, const Dataset& data, const Normalization& norm);

}  // namespace pcnn
