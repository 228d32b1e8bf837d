// Optimizer kernels of the cudnn backend (host entry points): one launch updates the whole
// parameter arena; hyper-parameters and the step counter are read on the device.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace pcnn::vendor {

void launch_sgd_update(cudaStream_t stream, size_t n, float* params, const float* grads,
                       float* velocity, const float* hyper);
void launch_adam_update(cudaStream_t stream, size_t n, float* params, const float* grads,
                        float* m, float* v, const float* hyper, const int32_t* step);
// *counter += 1
void launch_increment(cudaStream_t stream, int32_t* counter);

}  // namespace pcnn::vendor
