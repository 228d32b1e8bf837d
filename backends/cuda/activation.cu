// Elementwise ops of the cuda backend (cudnn inherits them): fill, bias add, bias gradient,
// activations. Activation kernels are instantiated per row of the table in core/vocabulary.hpp
// through dispatch_activation, so a new activation needs no edit here.
#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"
#include "core/activation_math.hpp"

namespace pcnn {

namespace cuda {

namespace {

// dst (n) = value; 16-byte stores for the body, scalar ones for the ragged tail
__global__ void fill_kernel_vec4(float* dst, float value, size_t n) {
  wait_for_previous_kernel();
  const size_t n4 = n / 4;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  float4* d4 = reinterpret_cast<float4*>(dst);
  for (size_t i = first; i < n4; i += stride) d4[i] = make_float4(value, value, value, value);
  for (size_t i = n4 * 4 + first; i < n; i += stride) dst[i] = value;
}

// dst (n) = value, any alignment
__global__ void fill_kernel_scalar(float* dst, float value, size_t n) {
  wait_for_previous_kernel();
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = value;
}

// y (N,C,HW) += b (C)
__global__ void bias_add_kernel_plain(size_t total, int C, int HW, const float* b, float* y) {
  wait_for_previous_kernel();
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride)
    y[i] += b[(i / HW) % C];
}

// dy (N,C,HW) -> db (C): block c sums its channel over N and HW
__global__ void bias_backward_kernel_block(int N, int C, int HW, const float* dy, float* db) {
  wait_for_previous_kernel();
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

// y (n) = act(x); templated through dispatch_activation, so the formula folds into the loop
template <Activation A>
__global__ void activation_forward_kernel_plain(size_t n, const float* x, float* y) {
  wait_for_previous_kernel();
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = activate<A>(x[i]);
}

// y, dy (n) -> dx (n) = dy * act'(y)
template <Activation A>
__global__ void activation_backward_kernel_plain(size_t n, const float* y, const float* dy,
                                                 float* dx) {
  wait_for_previous_kernel();
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dx[i] = dy[i] * activation_derivative<A>(y[i]);
}

constexpr int kThreads = 256;

}  // namespace

}  // namespace cuda

void CudaBackend::fill(float* dst, float value, size_t n) {
  ctx_.bind();
  if (n == 0) return;
  if (cuda::aligned16(dst)) {
    cuda::launch(ctx_, "fill_kernel_vec4", cuda::fill_kernel_vec4,
                 cuda::grid_for(n / 4 + 1, cuda::kThreads, ctx_.sm_count()), cuda::kThreads, 0, dst,
                 value, n);
  } else {
    cuda::launch(ctx_, "fill_kernel_scalar", cuda::fill_kernel_scalar,
                 cuda::grid_for(n, cuda::kThreads, ctx_.sm_count()), cuda::kThreads, 0, dst, value,
                 n);
  }
}

void CudaBackend::bias_add(int N, int C, int HW, const float* b, float* y) {
  ctx_.bind();
  const size_t total = size_t(N) * C * HW;
  if (total == 0) return;
  cuda::launch(ctx_, "bias_add_kernel_plain", cuda::bias_add_kernel_plain,
               cuda::grid_for(total, cuda::kThreads, ctx_.sm_count()), cuda::kThreads, 0, total, C,
               HW, b, y);
}

// One block per channel, so the sum order is fixed.
void CudaBackend::bias_backward(int N, int C, int HW, const float* dy, float* db) {
  ctx_.bind();
  if (C == 0) return;
  cuda::launch(ctx_, "bias_backward_kernel_block", cuda::bias_backward_kernel_block, C,
               cuda::kThreads, 0, N, C, HW, dy, db);
}

void CudaBackend::activation_forward(Activation act, size_t n, const float* x, float* y) {
  ctx_.bind();
  if (n == 0) return;
  const int blocks = cuda::grid_for(n, cuda::kThreads, ctx_.sm_count());
  dispatch_activation(act, [&](auto tag) {
    cuda::launch(ctx_, "activation_forward_kernel_plain",
                 cuda::activation_forward_kernel_plain<decltype(tag)::value>, blocks,
                 cuda::kThreads, 0, n, x, y);
  });
}

void CudaBackend::activation_backward(Activation act, size_t n, const float* y, const float* dy,
                                      float* dx) {
  ctx_.bind();
  if (n == 0) return;
  const int blocks = cuda::grid_for(n, cuda::kThreads, ctx_.sm_count());
  dispatch_activation(act, [&](auto tag) {
    cuda::launch(ctx_, "activation_backward_kernel_plain",
                 cuda::activation_backward_kernel_plain<decltype(tag)::value>, blocks,
                 cuda::kThreads, 0, n, y, dy, dx);
  });
}

}  // namespace pcnn
