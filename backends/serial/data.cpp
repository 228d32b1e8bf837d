// Serial batch gathering: shuffled training batches and in-order evaluation batches.
#include "backends/serial/serial_backend.hpp"
#include "core/batch_math.hpp"

namespace pcnn {

void SerialBackend::gather_train_batch(const DeviceDataset& data, const int32_t* step,
                                       int steps_per_epoch, uint32_t seed,
                                       const BatchLayout& layout, float* x, int32_t* y) {
  const TrainBatchPosition pos = train_batch_position(*step, steps_per_epoch, layout.batch, seed);
  for (int j = 0; j < layout.batch; ++j) {
    const uint32_t src = shuffle_index(pos.first + j, data.count, pos.key);
    for (int e = 0; e < layout.out_h * layout.out_w; ++e)
      x[size_t(j) * layout.out_h * layout.out_w + e] = batch_pixel(data, layout, src, e);
    y[j] = data.labels[src];
  }
}

void SerialBackend::gather_batch(const DeviceDataset& data, int first, const BatchLayout& layout,
                                 float* x, int32_t* y) {
  for (int j = 0; j < layout.batch; ++j) {
    for (int e = 0; e < layout.out_h * layout.out_w; ++e)
      x[size_t(j) * layout.out_h * layout.out_w + e] = batch_pixel(data, layout, first + j, e);
    y[j] = data.labels[first + j];
  }
}

}  // namespace pcnn
