// 16-bit storage conversions of the cuda backend (cudnn inherits them), with the bits of
// core/precision.hpp, so every backend stores the same values.
#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/launch.cuh"
#include "core/precision.hpp"

namespace pcnn {

namespace cuda {

namespace {

// y (n) = round(x * *scale) (scale nullptr: x)
__global__ void round_to_16bit_kernel(Precision p, size_t n, const float* x, const float* scale,
                                      uint16_t* y) {
  wait_for_previous_kernel();
  const float s = scale ? *scale : 1.f;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = round_to_storage(p, scale ? x[i] * s : x[i]);
}

// y (n) = the floats x holds
__global__ void widen_16bit_kernel(Precision p, size_t n, const uint16_t* x, float* y) {
  wait_for_previous_kernel();
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = widen_from_storage(p, x[i]);
}

constexpr int kThreads = 256;

}  // namespace

}  // namespace cuda

void CudaBackend::round_to_16bit(Precision p, size_t n, const float* x, const float* scale,
                                 uint16_t* y) {
  ctx_.bind();
  if (n == 0) return;
  cuda::launch(ctx_, "round_to_16bit_kernel", cuda::round_to_16bit_kernel,
               cuda::grid_for(n, cuda::kThreads, ctx_.sm_count()), cuda::kThreads, 0, p, n, x,
               scale, y);
}

void CudaBackend::widen_16bit(Precision p, size_t n, const uint16_t* x, float* y) {
  ctx_.bind();
  if (n == 0) return;
  cuda::launch(ctx_, "widen_16bit_kernel", cuda::widen_16bit_kernel,
               cuda::grid_for(n, cuda::kThreads, ctx_.sm_count()), cuda::kThreads, 0, p, n, x, y);
}

}  // namespace pcnn
