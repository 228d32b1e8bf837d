// Elementwise kernels of the cuda backend: fill, bias add, bias gradient, activations. The
// activation math is core/activation_math.hpp, the same function every backend evaluates.
#include "backends/cuda/activation.cuh"
#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_check.hpp"
#include "core/activation_math.hpp"

namespace pcnn::cuda {

namespace {

// dst (n) = value; 16-byte stores for the body, scalar ones for the ragged tail
__global__ void fill_kernel_vec4(float* dst, float value, size_t n) {
  const size_t n4 = n / 4;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  float4* d4 = reinterpret_cast<float4*>(dst);
  for (size_t i = first; i < n4; i += stride) d4[i] = make_float4(value, value, value, value);
  for (size_t i = n4 * 4 + first; i < n; i += stride) dst[i] = value;
}

// dst (n) = value, any alignment
__global__ void fill_kernel_scalar(float* dst, float value, size_t n) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = value;
}

// y (N,C,HW) += b (C)
__global__ void bias_add_kernel_plain(size_t total, int C, int HW, const float* b, float* y) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride)
    y[i] += b[(i / HW) % C];
}

// dy (N,C,HW) -> db (C): block c sums its channel over N and HW
__global__ void bias_backward_kernel_block(int N, int C, int HW, const float* dy, float* db) {
  __shared__ float red[32];
  const int c = blockIdx.x;
  float acc = 0.f;
  for (int n = 0; n < N; ++n) {
    const float* row = dy + (size_t(n) * C + c) * HW;
    for (int i = threadIdx.x; i < HW; i += blockDim.x) acc += row[i];
  }
  const float total = block_sum(acc, red);
  if (threadIdx.x == 0) db[c] = total;
}

// y (n) = act(x)
__global__ void activation_forward_kernel_plain(Activation act, size_t n, const float* x,
                                                float* y) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = activate(act, x[i]);
}

// y, dy (n) -> dx (n) = dy * act'(y)
__global__ void activation_backward_kernel_plain(Activation act, size_t n, const float* y,
                                                 const float* dy, float* dx) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dx[i] = dy[i] * activation_derivative(act, y[i]);
}

constexpr int kThreads = 256;

}  // namespace

void fill(CudaContext& ctx, float* dst, float value, size_t n) {
  if (n == 0) return;
  if (aligned16(dst)) {
    fill_kernel_vec4<<<grid_for(n / 4 + 1, kThreads, ctx.sm_count()), kThreads, 0,
                       ctx.stream()>>>(dst, value, n);
    PCNN_CUDA_CHECK_LAUNCH("fill_kernel_vec4");
  } else {
    fill_kernel_scalar<<<grid_for(n, kThreads, ctx.sm_count()), kThreads, 0, ctx.stream()>>>(
        dst, value, n);
    PCNN_CUDA_CHECK_LAUNCH("fill_kernel_scalar");
  }
}

void bias_add(CudaContext& ctx, int N, int C, int HW, const float* b, float* y) {
  const size_t total = size_t(N) * C * HW;
  if (total == 0) return;
  bias_add_kernel_plain<<<grid_for(total, kThreads, ctx.sm_count()), kThreads, 0,
                          ctx.stream()>>>(total, C, HW, b, y);
  PCNN_CUDA_CHECK_LAUNCH("bias_add_kernel_plain");
}

void bias_backward(CudaContext& ctx, int N, int C, int HW, const float* dy, float* db) {
  if (C == 0) return;
  bias_backward_kernel_block<<<C, kThreads, 0, ctx.stream()>>>(N, C, HW, dy, db);
  PCNN_CUDA_CHECK_LAUNCH("bias_backward_kernel_block");
}

void activation_forward(CudaContext& ctx, Activation act, size_t n, const float* x, float* y) {
  if (n == 0) return;
  activation_forward_kernel_plain<<<grid_for(n, kThreads, ctx.sm_count()), kThreads, 0,
                                    ctx.stream()>>>(act, n, x, y);
  PCNN_CUDA_CHECK_LAUNCH("activation_forward_kernel_plain");
}

void activation_backward(CudaContext& ctx, Activation act, size_t n, const float* y,
                         const float* dy, float* dx) {
  if (n == 0) return;
  activation_backward_kernel_plain<<<grid_for(n, kThreads, ctx.sm_count()), kThreads, 0,
                                     ctx.stream()>>>(act, n, y, dy, dx);
  PCNN_CUDA_CHECK_LAUNCH("activation_backward_kernel_plain");
}

}  // namespace pcnn::cuda
