// Batch gathering of the cuda backend (cudnn inherits it): block j fills sample j from the uint8
// data set resident on the device. The shuffle (core/shuffle.hpp) and the pixel normalisation
// (core/batch_math.hpp) are the shared ones, so every backend sees one order.
#include <cstdint>

#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"
#include "core/batch_math.hpp"

namespace pcnn {

namespace cuda {

namespace {

// Sample src into xj (channels x out_h x out_w floats) by the block's threads. Where the sample
// is stored as the batch lays it out and xj is 16-byte aligned (`words`), a thread moves four
// pixels at a time: one 4-byte load, one 16-byte store, every load of the block in flight at once
// (LeNet-5: 196 words for 256 threads). The same numbers as batch_pixel, which the rest takes.
__device__ void gather_sample(const DeviceDataset& d, const BatchLayout& l, uint32_t src,
                              bool words, float* xj) {
  const int area = batch_sample_size(d, l);
  if (words) {
    const int plane = l.out_h * l.out_w;
    const uchar4* in = reinterpret_cast<const uchar4*>(d.images + size_t(src) * area);
    float4* out = reinterpret_cast<float4*>(xj);
    for (int q = threadIdx.x; q < area / 4; q += blockDim.x) {
      const uchar4 p = __ldg(in + q);
      // The channel's constants picked in registers (an indexed read of the kernel's argument
      // would copy it to the stack).
      const int ch = 4 * q / plane;
      float m = d.mean[0], s = d.inv_std[0];
#pragma unroll
      for (int c = 1; c < kMaxDataChannels; ++c)
        if (c == ch) m = d.mean[c], s = d.inv_std[c];
      out[q] = make_float4(normalised_pixel(float(p.x), m, s), normalised_pixel(float(p.y), m, s),
                           normalised_pixel(float(p.z), m, s), normalised_pixel(float(p.w), m, s));
    }
    return;
  }
  for (int e = threadIdx.x; e < area; e += blockDim.x) xj[e] = batch_pixel(d, l, src, e);
}

// -> x (batch,C,out_h,out_w), y (batch); sample j = shuffle(pos + j) of the step's epoch. Every
// thread works the shuffle out itself (a few dozen integer operations) rather than wait at a
// barrier for one thread to.
__global__ void gather_batch_kernel_shuffled(DeviceDataset d, const int32_t* step,
                                             int steps_per_epoch, uint32_t seed, BatchLayout l,
                                             bool words, float* x, int32_t* y) {
  wait_for_previous_kernel();
  const int j = blockIdx.x;
  const TrainBatchPosition pos = train_batch_position(__ldg(step), steps_per_epoch, l.batch, seed);
  const uint32_t src = shuffle_index(pos.first + uint32_t(j), uint32_t(d.count), pos.key);
  if (threadIdx.x == 0) y[j] = d.labels[src];
  gather_sample(d, l, src, words, x + size_t(j) * batch_sample_size(d, l));
}

// -> x (batch,C,out_h,out_w), y (batch); sample j = first + j
__global__ void gather_batch_kernel_ordered(DeviceDataset d, int first, BatchLayout l, bool words,
                                            float* x, int32_t* y) {
  wait_for_previous_kernel();
  const int j = blockIdx.x;
  const uint32_t src = uint32_t(first + j);
  if (threadIdx.x == 0) y[j] = d.labels[src];
  gather_sample(d, l, src, words, x + size_t(j) * batch_sample_size(d, l));
}

// Whether gather_sample may move words into x.
bool words_fit(const DeviceDataset& d, const BatchLayout& l, const float* x) {
  return batch_copies_by_words(d, l) && reinterpret_cast<uintptr_t>(x) % 16 == 0;
}

// Threads a block: one an element (a word where words move), whole warps, at most 256.
int threads_for(const DeviceDataset& d, const BatchLayout& l, bool words) {
  const int items = words ? batch_sample_size(d, l) / 4 : batch_sample_size(d, l);
  return items >= 256 ? 256 : (items < 32 ? 32 : (items + 31) / 32 * 32);
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
  const bool words = cuda::words_fit(data, layout, x);
  cuda::launch(ctx_, "gather_batch_kernel_shuffled", cuda::gather_batch_kernel_shuffled,
               layout.batch, cuda::threads_for(data, layout, words), 0, data, step,
               steps_per_epoch, seed, layout, words, x, y);
}

void CudaBackend::gather_batch(const DeviceDataset& data, int first, const BatchLayout& layout,
                               float* x, int32_t* y) {
  ctx_.bind();
  if (layout.batch == 0) return;
  cuda::check_layout(data, layout, "gather_batch");
  PCNN_CHECK(first >= 0 && first + layout.batch <= data.count,
             "cuda gather_batch: samples " << first << ".." << first + layout.batch - 1
                                           << " outside the data set of " << data.count);
  const bool words = cuda::words_fit(data, layout, x);
  cuda::launch(ctx_, "gather_batch_kernel_ordered", cuda::gather_batch_kernel_ordered, layout.batch,
               cuda::threads_for(data, layout, words), 0, data, first, layout, words, x, y);
}

}  // namespace pcnn
