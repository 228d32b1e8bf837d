// Inverted dropout of the cuda backend (cudnn inherits it): one element per thread step of a
// grid-stride loop, the mask from core/dropout_math.hpp (the CPU backends' code). The step is
// read on the device, so a replayed graph draws a new mask every step.
#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"
#include "core/dropout_math.hpp"

namespace pcnn {

namespace cuda {

namespace {

// y (n) = x * scale where kept, 0 where dropped; x == y allowed
__global__ void dropout_kernel_plain(size_t n, uint32_t seed, uint32_t salt, const int32_t* step,
                                     uint32_t threshold, float scale, const float* x, float* y) {
  wait_for_previous_kernel();
  const uint64_t key = dropout_key(seed, salt, *step);
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = dropout_apply(x[i], key, i, threshold, scale);
}

constexpr int kThreads = 256;

}  // namespace

}  // namespace cuda

void CudaBackend::dropout_forward(size_t n, float rate, uint32_t seed, uint32_t salt,
                                  const int32_t* step, const float* x, float* y) {
  ctx_.bind();
  if (n == 0) return;
  // Threshold and scale on the host: the same integers and float as every other backend.
  cuda::launch(ctx_, "dropout_kernel_plain", cuda::dropout_kernel_plain,
               cuda::grid_for(n, cuda::kThreads, ctx_.sm_count()), cuda::kThreads, 0, n, seed, salt,
               step, dropout_threshold(rate), dropout_scale(rate), x, y);
}

// The forward's mask, drawn again from the same step.
void CudaBackend::dropout_backward(size_t n, float rate, uint32_t seed, uint32_t salt,
                                   const int32_t* step, const float* dy, float* dx) {
  dropout_forward(n, rate, seed, salt, step, dy, dx);
}

}  // namespace pcnn
