// The training loop: the data set resident on the device, batches drawn there, one step =
// gather, forward, loss, backward, update, counter++ (train/step.cpp) — captured once as a graph
// where the backend can. The loss and correct count stay on the device; they are read back at
// the end of each epoch and, for progress reports, at most as often as asked (on_progress).
//
// Data parallelism: with several replicas (one backend and one identical model per device),
// each takes its shard of every global batch, gradients are averaged by a Collective, and every
// replica applies the same update — the same training as one replica with the whole batch.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/collective.hpp"
#include "core/augment_config.hpp"
#include "data/dataset.hpp"
#include "models/model.hpp"
#include "train/optimizer.hpp"

namespace pcnn {

// What training does with a step whose loss or gradients are not finite (NaN or Inf). Either
// way that step's update is skipped on the device (check_step); stop ends the epoch at the next
// read-back that shows it, skip trains on and counts it.
enum class NanPolicy { Stop, Skip };

// How the learning rate moves from epoch to epoch (Trainer::learning_rate). Exp: multiplied by
// lr_decay after every epoch. Cosine: half a cosine from the optimizer's rate toward 0 over the
// run's epochs, lr * (1 + cos(pi * epoch / epochs)) / 2 (PyTorch's CosineAnnealingLR stepped
// once an epoch); lr_decay is not used.
enum class LrSchedule { Exp, Cosine };

struct TrainConfig {
  int epochs = 10;
  int batch = 64;          // global batch: split evenly across replicas
  uint32_t seed = 1;
  OptimizerConfig optimizer;
  LrSchedule lr_schedule = LrSchedule::Exp;
  float lr_decay = 1.f;    // Exp: learning rate multiplied by this after every epoch
  bool graphs = true;      // replay the step as a graph when the backend supports it
  NanPolicy on_nan = NanPolicy::Stop;
  AugmentConfig augment;   // applied on the device to each training batch (never to evaluation)
};

// The first step of an epoch (since a restore, if later) whose loss or gradients were not
// finite: step is the 1-based global step (0: none recorded), grad_index the lowest parameter
// index whose gradient was not finite (-1: the gradients were finite, the loss was not).
struct StepFault {
  int64_t step = 0;
  int64_t grad_index = -1;
};

struct EpochStats {
  int epoch = 0;
  double train_loss = 0, train_accuracy = 0, test_accuracy = 0, test_loss = 0;
  double learning_rate = 0;  // the one this epoch trained with
  double images_per_s = 0;  // training images over the epoch's training time
  double elapsed_s = 0;     // since training began
  bool stopped = false;     // the step hook, or a fault under NanPolicy::Stop, ended it early
  int64_t skipped_steps = 0;  // steps not applied because they were not finite
  StepFault first_fault;      // the first of them
  bool fault_stop = false;    // NanPolicy::Stop saw a new fault (stopped: before the last step)
  double val_loss = NAN, val_accuracy = NAN;  // on the held-out validation set (NaN: none)
  // fp16: the dynamic loss scale at the epoch's end; its overflowing steps are among the
  // skipped ones, and stop a run (NanPolicy::Stop) only once the scale is at its minimum
  float loss_scale = 1.f;
};

struct EvalResult {
  double loss = 0, accuracy = 0;
  int count = 0;
};

// Normalization (the input normalisation) is in data/dataset.hpp.

// Where an epoch stands, reported while it runs: totals over the epoch so far.
struct StepProgress {
  int epoch = 0;               // 1-based
  int step = 0, steps = 0;     // steps done in this epoch, steps per epoch
  int64_t images = 0;          // training images in those steps, less the skipped steps'
  double loss_sum = 0;         // summed cross-entropy over those images
  double correct = 0;          // how many of them were classified right
  double seconds = 0;          // since the epoch's first step
  int64_t skipped_steps = 0;   // steps of the epoch so far not applied: not finite
  StepFault first_fault;
  float loss_scale = 1.f;      // fp16: the dynamic loss scale now (Optimizer::set_loss_scale)
};
using ProgressCallback = std::function<void(const StepProgress&)>;
// After a step of train_epoch: the epoch (0-based) and the steps done in it. false stops there.
using StepHook = std::function<bool(int epoch, int step)>;

// Everything on the devices that a run needs to go on exactly where it was (checkpoints): with
// the same settings and data, restoring it and training on gives bit for bit the weights of a
// run never stopped. The data order and Adam's step count follow from global_step alone (the
// shuffle is a keyed function of the step: core/shuffle.hpp); the learning rate from the epoch.
struct TrainingState {
  int64_t global_step = 0;              // steps done since training began
  std::vector<float> params;            // the model's parameter arena
  std::vector<float> moment1, moment2;  // optimizer state (Optimizer::moment1, moment2)
  std::vector<float> state;             // the model's non-trained state (Model::get_state)
  std::vector<float> metrics;           // kMetricCount running sums of the epoch per replica
                                        // (core/contract_types.hpp)
  std::vector<float> loss_scale;        // fp16: Optimizer::loss_scale_state; empty otherwise
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
  // During train_epoch, calls report after every every_steps-th step of an epoch and whenever
  // every_s seconds have passed since the last call (0 turns either off). The clock is read
  // every step (cheap); the device only when a report is due: one download, which waits for
  // the steps launched so far, so every_s should stay a fraction of a second or more.
  void on_progress(ProgressCallback report, double every_s, int every_steps);
  // Calls hook after every step of train_epoch (after any progress report); when it returns
  // false, train_epoch returns at once with stats over the steps so far and stopped set.
  void on_step(StepHook hook) { step_hook_ = std::move(hook); }
  // Steps done since training began, those before a restore included.
  int64_t global_step() const { return global_step_; }
  // A copy of the training state (waits for the device; train/trainer_state.cpp).
  TrainingState state() const;
  // Puts a state back, on every replica, before any step of this trainer; the next
  // train_epoch must be the epoch the state is in, and continues it after its last step.
  void restore(const TrainingState& s);
  // The learning rate of an epoch (0-based), as the schedule sets it (LrSchedule).
  float learning_rate(int epoch) const;
  // One training step of every replica (public for tests and the bench).
  void step();
  // Waits for all launched work on every replica.
  void synchronize();
  bool using_graph() const;

 private:
  struct Replica;
  void run_local_step(Replica& r, bool with_update);  // train/step.cpp
  bool capture_local_step(Replica& r, bool with_update);  // false: capture failed, stay eager
  void update(Replica& r);                            // train/replica.cpp
  void allreduce_and_update();                        // train/replica.cpp
  StepProgress progress(int epoch, int step) const;   // reads the device (synchronises)
  bool new_fault(const StepProgress& p) const;        // one the policy stops for
  std::vector<std::unique_ptr<Replica>> replicas_;
  Collective* collective_ = nullptr;
  TrainConfig cfg_;
  int steps_per_epoch_ = 0;
  int steps_done_ = 0;          // by this trainer (graph capture)
  int64_t global_step_ = 0;     // since training began (restore sets it)
  bool restored_ = false;       // the next train_epoch continues the restored one
  StepHook step_hook_;
  ProgressCallback report_;
  double report_every_s_ = 0;
  int report_every_steps_ = 0;
  int64_t faults_reported_ = 0;  // skipped steps of this epoch already known (a restore's)
};

// The layer a gradient index falls in, e.g. "layer 2 (conv 5x5 x16 +relu +maxpool 2) weights"
// (1-based, in the order of the model summary).
std::string parameter_name(const Model& model, int64_t index);
// One line about a fault, e.g. "the gradients are not finite at step 1234 (epoch 2, step 297 of
// 937), first in layer 2 (conv 5x5 x16) weights".
std::string describe_fault(const Model& model, const StepFault& f, int steps_per_epoch);

// Throws Error with one line when a magnitude is outside its bounds (core/augment_config.hpp).
void check_augment(const AugmentConfig& a);

// Accuracy and mean loss of the model on a whole data set, in batches of up to model.max_batch().
EvalResult evaluate(Backend& be, Model& model, const Dataset& data, const Normalization& norm);

// The same, again and again on one data set (after every epoch): the set is uploaded and the
// batch buffers allocated once, not at every call (on a GPU each call would otherwise copy the
// whole set and free buffers, which waits for the device). Holds references to be and data.
class Evaluator {
 public:
  Evaluator(Backend& be, const Model& model, const Dataset& data, const Normalization& norm);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;
  // model: the one given above or one of the same input shape and at least its batch.
  EvalResult run(Model& model);

 private:
  struct Buffers;
  Backend& be_;
  const Dataset& data_;
  std::unique_ptr<Buffers> b_;
};

}  // namespace pcnn
