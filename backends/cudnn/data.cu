// Batch gathering and fill. A block per sample: one thread draws the sample's index (the shuffle
// is a few dozen integer ops, not worth repeating per pixel), then the block writes its pixels.
#include "backends/cudnn/cudnn_check.hpp"
#include "backends/cudnn/data.cuh"
#include "backends/cudnn/launch.cuh"
#include "core/batch_math.hpp"
#include "core/shuffle.hpp"

namespace pcnn::vendor {

namespace {

// One sample's plane: x (out_h*out_w) of sample `src`, normalised and padded.
__device__ void write_sample(const DeviceDataset& d, const BatchLayout& l, uint32_t src,
                             float* x) {
  const int plane = l.out_h * l.out_w;
  for (int e = threadIdx.x; e < plane; e += blockDim.x) x[e] = batch_pixel(d, l, src, e);
}

// data, *step -> x (batch,1,out_h,out_w), y (batch); block j writes sample j
__global__ void gather_train_batch_kernel_sample(DeviceDataset d, const int32_t* step,
                                                 int steps_per_epoch, uint32_t seed,
                                                 BatchLayout l, float* x, int32_t* y) {
  __shared__ uint32_t src;
  const int j = blockIdx.x;
  if (threadIdx.x == 0) {
    const TrainBatchPosition pos = train_batch_position(*step, steps_per_epoch, l.batch, seed);
    src = shuffle_index(pos.first + uint32_t(j), uint32_t(d.count), pos.key);
    y[j] = d.labels[src];
  }
  __syncthreads();
  write_sample(d, l, src, x + size_t(j) * l.out_h * l.out_w);
}

// data -> x (batch,1,out_h,out_w), y (batch) of samples first + j; block j writes sample j
__global__ void gather_batch_kernel_sample(DeviceDataset d, int first, BatchLayout l, float* x,
                                           int32_t* y) {
  const int j = blockIdx.x;
  const uint32_t src = uint32_t(first + j);
  if (threadIdx.x == 0) y[j] = d.labels[src];
  write_sample(d, l, src, x + size_t(j) * l.out_h * l.out_w);
}

// dst (n) = value
__global__ void fill_kernel_grid(float* dst, float value, size_t n) {
  PCNN_GRID_STRIDE_LOOP(i, n) dst[i] = value;
}

void check_layout(const DeviceDataset& data, const BatchLayout& layout, const char* what) {
  PCNN_CHECK(layout.out_h >= 1 && layout.out_w >= 1,
             "cudnn " << what << ": empty batch plane " << layout.out_h << "x" << layout.out_w);
  PCNN_CHECK(data.count > 0 && data.images && data.labels,
             "cudnn " << what << ": the data set is empty or not on the device");
}

}  // namespace

void launch_gather_train_batch(cudaStream_t stream, const DeviceDataset& data,
                               const int32_t* step, int steps_per_epoch, uint32_t seed,
                               const BatchLayout& layout, float* x, int32_t* y) {
  if (layout.batch <= 0) return;
  check_layout(data, layout, "gather_train_batch");
  PCNN_CHECK(steps_per_epoch > 0,
             "cudnn gather_train_batch: steps_per_epoch must be positive, got " << steps_per_epoch);
  gather_train_batch_kernel_sample<<<layout.batch, kThreads, 0, stream>>>(
      data, step, steps_per_epoch, seed, layout, x, y);
  PCNN_CUDA_CHECK_LAUNCH();
}

void launch_gather_batch(cudaStream_t stream, const DeviceDataset& data, int first,
                         const BatchLayout& layout, float* x, int32_t* y) {
  if (layout.batch <= 0) return;
  check_layout(data, layout, "gather_batch");
  PCNN_CHECK(first >= 0 && first + layout.batch <= data.count,
             "cudnn gather_batch: samples " << first << ".." << first + layout.batch - 1
                                            << " outside the data set of " << data.count);
  gather_batch_kernel_sample<<<layout.batch, kThreads, 0, stream>>>(data, first, layout, x, y);
  PCNN_CUDA_CHECK_LAUNCH();
}

void launch_fill(cudaStream_t stream, float* dst, float value, size_t n) {
  if (n == 0) return;
  fill_kernel_grid<<<grid_for(n), kThreads, 0, stream>>>(dst, value, n);
  PCNN_CUDA_CHECK_LAUNCH();
}

}  // namespace pcnn::vendor
