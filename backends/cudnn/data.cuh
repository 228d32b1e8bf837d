// Data-pipeline kernels of the cudnn backend (host entry points): batches gathered from the
// uint8 data set resident on the device, with the shared shuffle, and a float fill.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "backends/backend.hpp"

namespace pcnn::vendor {

// Training batch (*step % steps_per_epoch) of epoch (*step / steps_per_epoch), shuffled.
void launch_gather_train_batch(cudaStream_t stream, const DeviceDataset& data,
                               const int32_t* step, int steps_per_epoch, uint32_t seed,
                               const BatchLayout& layout, float* x, int32_t* y);
// Samples first .. first + layout.batch - 1, in order.
void launch_gather_batch(cudaStream_t stream, const DeviceDataset& data, int first,
                         const BatchLayout& layout, float* x, int32_t* y);
// dst[0..n) = value
void launch_fill(cudaStream_t stream, float* dst, float value, size_t n);

}  // namespace pcnn::vendor
