// Checkpoints of a training run: everything `pcnn train --resume` needs to go on exactly where
// the run was, in the safetensors container of models/tensor_file.hpp (format
// "pcnn-checkpoint", version 3, crc32 over every byte) and written atomically
// (models/atomic_write.hpp), so a kill at any instant leaves the old checkpoint or the new one.
// Tensors: "params", "optimizer.moment1", "optimizer.moment2" (Adam only), "state" (the model's
// non-trained state, only when it has some: batchnorm running statistics; version 2 had none),
// "metrics" (replicas x kMetricCount). Metadata: "run" (the settings, JSON), "position" (JSON), "history" (the log
// rows, JSON), "log_mark" (JSON) and the data set's description ("provenance.*").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_spec.hpp"
#include "models/provenance.hpp"
#include "report/training_log.hpp"
#include "train/trainer.hpp"

namespace pcnn {

// What defines the run: resuming with any of these changed would be another run.
struct RunSettings {
  ModelSpec spec;              // unfused
  std::string optimizer = "adam";
  float lr = 0, momentum = 0, weight_decay = 0, lr_decay = 1;
  std::string lr_schedule = "exp";  // --lr-schedule: exp | cosine
  std::string precision = "fp32";   // --precision: fp32 | bf16 | fp16
  int batch = 0, epochs = 0;
  int limit = 0;               // first N training and test images; 0 = all
  int replicas = 1;            // --gpus: each replica keeps its own metric sums
  uint32_t seed = 1;
  Normalization norm;          // the input normalisation, computed once from the training data
  AugmentConfig augment;       // none unless the run augments ("augment" in the JSON)
  double val_split = 0;        // --val-split: the fraction of the training set held out
  std::string data_format;     // --data-format as given ("" = detected)
};

struct Checkpoint {
  RunSettings run;
  Provenance data;             // data_provenance() of the data set trained on
  int steps_per_epoch = 0;
  TrainingState state;         // position (global step), parameters, optimizer, epoch sums
  std::vector<LogRow> history; // every log row written so far (epoch and step rows)
  StepProgress log_mark;       // the totals at the last step row of the epoch in progress
  double elapsed_s = 0;        // training time before this checkpoint
  // Where and how it was written; --resume keeps them unless told otherwise, so that a resumed
  // run is bit for bit the run it continues.
  int checkpoint_every = 0;    // the cadence (steps)
  std::string backend;         // the backend's name
  int threads = 0;             // --threads as given (0 = all cores)

  int epoch() const { return int(state.global_step / steps_per_epoch); }        // 0-based
  int step_in_epoch() const { return int(state.global_step % steps_per_epoch); }
};

void save_checkpoint(const std::string& path, const Checkpoint& c);
// Throws Error with one line naming the file and what is wrong: missing, not a checkpoint,
// truncated, checksum, a bad or missing field, tensors that do not fit the settings.
Checkpoint load_checkpoint(const std::string& path);

std::string encode_checkpoint(const Checkpoint& c);
Checkpoint decode_checkpoint(const std::string& bytes, const std::string& name);

}  // namespace pcnn
