// One model at one batch size on one backend: the full training step, its forward and
// backward(+update) phases, and optionally each layer on its own.
#pragma once

#include <string>
#include <vector>

#include "bench/timing.hpp"
#include "core/precision.hpp"
#include "data/dataset.hpp"
#include "models/model_spec.hpp"

namespace pcnn::bench {

// One layer of the per-layer breakdown (view layers such as flatten, which launch nothing, are
// left out; index is still the layer's position in the fused model).
struct LayerTime {
  int index = 0;
  std::string layer;  // Layer::describe()
  Summary forward, backward;
  double forward_flops = 0, backward_flops = 0;
};

struct ModelRun {
  std::string backend, device, model;
  int threads = 0;           // CPU threads it ran with; 0 for GPU backends
  bool host_memory = true;   // Backend::is_host_memory(): a CPU backend
  int batch = 0;
  Summary step;      // Trainer::step(): gather, forward, loss, backward, update, counter
  Summary forward;   // Model::forward
  Summary backward;  // loss gradient + Model::backward + optimizer update
  double forward_flops = 0, backward_flops = 0;  // counted, per step
  // Per-layer breakdown (empty when not asked for); every entry includes one synchronize.
  std::vector<LayerTime> layers;
  Summary loss, update;  // the two non-layer parts of backward(+update), per-layer runs only
  double speedup = 0;    // over the baseline at the same model and batch (0: not known)
  // Memory: the most the backend had allocated during this run (model, trainer, optimizer,
  // uploaded data, counted scratch), the whole device's use after the timed steps where the
  // backend can tell (GPU; -1 otherwise), and the activation bytes the model keeps per image.
  int64_t peak_bytes = 0, device_in_use_bytes = -1, activation_bytes_per_image = 0;
};

struct ModelBenchConfig {
  RepeatPolicy policy;
  bool per_layer = false;
  uint64_t seed = 1;
  std::string optimizer = "adam";  // sgd | adam
  Precision precision = Precision::F32;  // of the activations between layers
};

// Runs the measurements on be (which must stay idle otherwise). threads is only recorded.
ModelRun bench_model(Backend& be, int threads, const ModelSpec& spec, int batch,
                     const Dataset& data, const ModelBenchConfig& cfg);

}  // namespace pcnn::bench
