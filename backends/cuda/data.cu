// Batch gathering: block j fills sample j. The shuffle (core/shuffle.hpp) and the pixel
// normalisation (core/batch_math.hpp) are the shared ones, so every backend sees one order.
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/data.cuh"
#include "core/batch_math.hpp"

namespace pcnn::cuda {

namespace {

// -> x (batch,1,out_h,out_w), y (batch); sample j = shuffle(pos + j) of the step's epoch
__global__ void gather_batch_kernel_shuffled(DeviceDataset d, const int32_t* step,
                                             int steps_per_epoch, uint32_t seed, BatchLayout l,
                                             float* x, int32_t* y) {
  __shared__ uint32_t src;
  const int j = blockIdx.x;
  if (threadIdx.x == 0) {
    const TrainBatchPosition pos = train_batch_position(*step, steps_per_epoch, l.batch, seed);
    src = shuffle_index(pos.first + uint32_t(j), uint32_t(d.count), pos.key);
    y[j] = d.labels[src];
  }
  __syncthreads();
  const int area = l.out_h * l.out_w;
  float* xj = x + size_t(j) * area;
  for (int e = threadIdx.x; e < area; e += blockDim.x) xj[e] = batch_pixel(d, l, src, e);
}

// -> x (batch,1,out_h,out_w), y (batch); sample j = first + j
__global__ void gather_batch_kernel_ordered(DeviceDataset d, int first, BatchLayout l, float* x,
                                            int32_t* y) {
  const int j = blockIdx.x;
  const uint32_t src = uint32_t(first + j);
  if (threadIdx.x == 0) y[j] = d.labels[src];
  const int area = l.out_h * l.out_w;
  float* xj = x + size_t(j) * area;
  for (int e = threadIdx.x; e < area; e += blockDim.x) xj[e] = batch_pixel(d, l, src, e);
}

int threads_for(const BatchLayout& l) {
  const int area = l.out_h * l.out_w;
  return area >= 512 ? 256 : (area < 32 ? 32 : (area + 31) / 32 * 32);
}

}  // namespace

void gather_train_batch(CudaContext& ctx, const DeviceDataset& data, const int32_t* step,
                        int steps_per_epoch, uint32_t seed, const BatchLayout& layout, float* x,
                        int32_t* y) {
  if (layout.batch == 0) return;
  PCNN_CHECK(steps_per_epoch > 0, "cuda gather_train_batch: steps_per_epoch must be positive");
  gather_batch_kernel_shuffled<<<layout.batch, threads_for(layout), 0, ctx.stream()>>>(
      data, step, steps_per_epoch, seed, layout, x, y);
  PCNN_CUDA_CHECK_LAUNCH("gather_batch_kernel_shuffled");
}

void gather_batch(CudaContext& ctx, const DeviceDataset& data, int first,
                  const BatchLayout& layout, float* x, int32_t* y) {
  if (layout.batch == 0) return;
  gather_batch_kernel_ordered<<<layout.batch, threads_for(layout), 0, ctx.stream()>>>(
      data, first, layout, x, y);
  PCNN_CUDA_CHECK_LAUNCH("gather_batch_kernel_ordered");
}

}  // namespace pcnn::cuda
