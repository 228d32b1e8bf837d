// OpenMP batch gathering: samples split statically, each sample written whole by one thread.
#include "backends/openmp/openmp_backend.hpp"
#include "core/batch_math.hpp"

namespace pcnn {

namespace {
// Sample src of the data set -> row j of x (batch,1,out_h,out_w) and y[j].
void gather_one(const DeviceDataset& data, const BatchLayout& layout, int j, uint32_t src,
                float* x, int32_t* y) {
  const int plane = layout.out_h * layout.out_w;
  float* out = x + size_t(j) * plane;
  for (int e = 0; e < plane; ++e) out[e] = batch_pixel(data, layout, src, e);
  y[j] = data.labels[src];
}
}  // namespace

// data (count,H,W) uint8, *step -> x (batch,1,out_h,out_w) of shuffled samples, y (batch)
void OpenMPBackend::gather_train_batch(const DeviceDataset& data, const int32_t* step,
                                       int steps_per_epoch, uint32_t seed,
                                       const BatchLayout& layout, float* x, int32_t* y) {
  follow_free_cpus();  // once per training step
  const TrainBatchPosition pos = train_batch_position(*step, steps_per_epoch, layout.batch, seed);
#pragma omp parallel for num_threads(threads_) schedule(static) if (layout.batch > 1)
  for (int j = 0; j < layout.batch; ++j)
    gather_one(data, layout, j, shuffle_index(pos.first + j, data.count, pos.key), x, y);
}

// data (count,H,W) uint8 -> x (batch,1,out_h,out_w), y (batch) of samples first.. in order
void OpenMPBackend::gather_batch(const DeviceDataset& data, int first, const BatchLayout& layout,
                                 float* x, int32_t* y) {
  follow_free_cpus();
#pragma omp parallel for num_threads(threads_) schedule(static) if (layout.batch > 1)
  for (int j = 0; j < layout.batch; ++j) gather_one(data, layout, j, uint32_t(first + j), x, y);
}

}  // namespace pcnn
