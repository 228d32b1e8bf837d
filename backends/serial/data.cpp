// Serial batch gathering: shuffled training batches and in-order evaluation batches.
#include "backends/serial/serial_backend.hpp"
#include "core/batch_math.hpp"

namespace pcnn {

// data (count,C,H,W) uint8, *step -> x (batch,C,out_h,out_w) of shuffled samples, y (batch)
void SerialBackend::gather_train_batch(const DeviceDataset& data, const int32_t* step,
                                       int steps_per_epoch, uint32_t seed,
                                       const BatchLayout& layout, float* x, int32_t* y) {
  const TrainBatchPosition pos = train_batch_position(*step, steps_per_epoch, layout.batch, seed);
  const int sample = batch_sample_size(data, layout);
  for (int j = 0; j < layout.batch; ++j) {
    const uint32_t src = shuffle_index(pos.first + j, data.count, pos.key);
    for (int e = 0; e < sample; ++e) x[size_t(j) * sample + e] = batch_pixel(data, layout, src, e);
    y[j] = data.labels[src];
  }
}

// data (count,C,H,W) uint8 -> x (batch,C,out_h,out_w), y (batch) of samples first.. in order
void SerialBackend::gather_batch(const DeviceDataset& data, int first, const BatchLayout& layout,
                                 float* x, int32_t* y) {
  const int sample = batch_sample_size(data, layout);
  for (int j = 0; j < layout.batch; ++j) {
    for (int e = 0; e < sample; ++e)
      x[size_t(j) * sample + e] = batch_pixel(data, layout, first + j, e);
    y[j] = data.labels[first + j];
  }
}

}  // namespace pcnn
