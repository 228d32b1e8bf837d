// Host entry points of the batch-gathering kernels (images stay uint8 on the device).
#pragma once

#include <cstdint>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_context.hpp"

namespace pcnn::cuda {

// Shuffled training batch number *step (read on the device, so a replayed graph advances).
void gather_train_batch(CudaContext& ctx, const DeviceDataset& data, const int32_t* step,
                        int steps_per_epoch, uint32_t seed, const BatchLayout& layout, float* x,
                        int32_t* y);
// Samples first .. first+batch-1 in order.
void gather_batch(CudaContext& ctx, const DeviceDataset& data, int first,
                  const BatchLayout& layout, float* x, int32_t* y);

}  // namespace pcnn::cuda
