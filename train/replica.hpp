// What one device holds for training (its data copy, optimizer, batch buffers, step counters),
// and the data-parallel part of a step: the gradient all-reduce and the update after it.
#pragma once

#include "backends/device_array.hpp"
#include "train/trainer.hpp"

namespace pcnn {

// The layout in which the model takes the data set's images (checked: channels and size).
BatchLayout layout_for(const Model& m, int batch, const Dataset& d);

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
  // With augmentation: the gathered batch (augment_batch writes x from it), the elastic
  // field's scratch, and the value a sample outside an image reads (per channel).
  DeviceArray<float> gathered, augment_scratch, augment_fill;
  bool graph_ready = false;
  bool graph_failed = false;  // the backend could not capture a step: stay eager

  Replica(Backend& b, Model& m, const Dataset& train, const Normalization& norm,
          const TrainConfig& cfg, int shard_batch, int rank, bool separate_update_counter);
  int32_t* step_for_update() {
    return update_counter.get() ? update_counter.get() : data_counter.get();
  }
};

}  // namespace pcnn
