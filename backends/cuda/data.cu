// Batch gathering of the cuda backend (cudnn inherits it): block j fills sample j from the uint8
// data set resident on the device. The shuffle (core/shuffle.hpp) and the pixel normalisation
// (core/batch_math.hpp) are the shared ones, so every backend sees one order.
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"
#include "core/batch_math.hpp"

namespace pcnn {

namespace cuda {

namespace {

// -> x (batch,C,out_h,out_w), y (batch); sample j = shuffle(pos + j) of the step's epoch
__global__ void gather_batch_kernel_shuffled(DeviceDataset d, const int32_t* step,
                                             int steps_per_epoch, uint32_t seed, BatchLayout l,
                                             float* x, int32_t* y) {
  wait_for_previous_kernel();
  __shared__ uint32_t src;
  const int j = blockIdx.x;
  if (threadIdx.x == 0) {
    const TrainBatchPosition pos = train_batch_position(*step, steps_per_epoch, l.batch, seed);
    src = shuffle_index(pos.first + uint32_t(j), uint32_t(d.count), pos.key);
    y[j] = d.labels[src];
  }
  __syncthreads();
  const int area = batch_sample_size(d, l);
  float* xj = x + size_t(j) * area;
  for (int e = threadIdx.x; e < area; e += blockDim.x) xj[e] = batch_pixel(d, l, src, e);
}

// -> x (batch,C,out_h,out_w), y (batch); sample j = first + j
__global__ void gather_batch_kernel_ordered(DeviceDataset d, int first, BatchLayout l, float* x,
                                            int32_t* y) {
  wait_for_previous_kernel();
  const int j = blockIdx.x;
  const uint32_t src = uint32_t(first + j);
  if (threadIdx.x == 0) y[j] = d.labels[src];
  const int area = batch_sample_size(d, l);
  float* xj = x + size_t(j) * area;
  for (int e = threadIdx.x; e < area; e += blockDim.x) xj[e] = batch_pixel(d, l, src, e);
}

int threads_for(const DeviceDataset& d, const BatchLayout& l) {
  const int area = batch_sample_size(d, l);
  return area >= 512 ? 256 : (area < 32 ? 32 : (area + 31) / 32 * 32);
}

// Host-side preconditions: a kernel reading an empty data set would fault, not throw.
void check_layout(const DeviceDataset& data, const BatchLayout& layout, const char* what) {
  PCNN_CHECK(layout.out_h >= 1 && layout.out_w >= 1,
             "cuda " << what << ": empty batch plane " << layout.out_h << "x" << layout.out_w);
  PCNN_CHECK(data.count > 0 && data.images && data.labels,
             "cuda " << what << ": the data set is empty or not on the device");
  PCNN_CHECK(data.channels >= 1 && data.channels <= kMaxDataChannels,
             "cuda " << what << ": " << data.channels << " channels (1 to " << kMaxDataChannels
                     << " supported)");
}

}  // namespace

}  // namespace cuda

void CudaBackend::gather_train_batch(const DeviceDataset& data, const int32_t* step,
                                     int steps_per_epoch, uint32_t seed,
                                     const BatchLayout& layout, float* x, int32_t* y) {
  ctx_.bind();
  if (layout.batch == 0) return;
  cuda::check_layout(data, layout, "gather_train_batch");
  PCNN_CHECK(steps_per_epoch > 0, "cuda gather_train_batch: steps_per_epoch must be positive");
  cuda::launch(ctx_, "gather_batch_kernel_shuffled", cuda::gather_batch_kernel_shuffled,
               layout.batch, cuda::threads_for(data, layout), 0, data, step, steps_per_epoch, seed,
               layout, x, y);
}

void CudaBackend::gather_batch(const DeviceDataset& data, int first, const BatchLayout& layout,
                               float* x, int32_t* y) {
  ctx_.bind();
  if (layout.batch == 0) return;
  cuda::check_layout(data, layout, "gather_batch");
  PCNN_CHECK(first >= 0 && first + layout.batch <= data.count,
             "cuda gather_batch: samples " << first << ".." << first + layout.batch - 1
                                           << " outside the data set of " << data.count);
  cuda::launch(ctx_, "gather_batch_kernel_ordered", cuda::gather_batch_kernel_ordered, layout.batch,
               cuda::threads_for(data, layout), 0, data, first, layout, x, y);
}

}  // namespace pcnn
