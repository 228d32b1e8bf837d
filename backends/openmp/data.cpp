// OpenMP batch gathering: samples split statically, each sample written whole by one thread.
#include "backends/openmp/openmp_backend.hpp"
#include "core/batch_math.hpp"

namespace pcnn {

namespace {
// Sample src of the data set -> row j of x (batch,C,out_h,out_w) and y[j].
void gather_one(const DeviceDataset& data, const BatchLayout& layout, int j, uint32_t src,
                float* x, int32_t* y) {
  const int sample = batch_sample_size(data, layout);
  float* out = x + size_t(j) * sample;
  for (int e = 0; e < sample; ++e) out[e] = batch_pixel(data, layout, src, e);
  y[j] = data.labels[src];
}
}  // namespace

// data (count,C,H,W) uint8, *step -> x (batch,C,out_h,out_w) of shuffled samples, y (batch)
void OpenMPBackend::gather_train_batch(const DeviceDataset& data, const int32_t* step,
                                       int steps_per_epoch, uint32_t seed,
                                       const BatchLayout& layout, float* x, int32_t* y) {
  follow_free_cpus();  // once per training step
  const TrainBatchPosition pos = train_batch_position(*step, steps_per_epoch, layout.batch, seed);
#pragma omp parallel for num_threads(threads_) schedule(static) if (layout.batch > 1)
  for (int j = 0; j < layout.batch; ++j)
    gather_one(data, layout, j, shuffle_index(pos.first + j, data.count, pos.key), x, y);
}

// data (count,C,H,W) uint8 -> x (batch,C,out_h,out_w), y (batch) of samples first.. in order
void OpenMPBackend::gather_batch(const DeviceDataset& data, int first, const BatchLayout& layout,
                                 float* x, int32_t* y) {
  follow_free_cpus();
#pragma omp parallel for num_threads(threads_) schedule(static) if (layout.batch > 1)
  for (int j = 0; j < layout.batch; ++j) gather_one(data, layout, j, uint32_t(first + j), x, y);
}

}  // namespace pcnn
