// Batch normalisation of the cuda backend (cudnn inherits it): block c reduces channel c (its
// M = N*HW values in a grid-stride order fixed by the block size, then block_sum's fixed tree),
// so results are the same every run; inference is one element-wise kernel.
#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "core/batchnorm_math.hpp"

namespace pcnn {

namespace cuda {

namespace {

constexpr int kBatchnormThreads = 512;

// Where value j (0 <= j < N*HW) of channel c of an (N,C,HW) tensor lives.
__device__ inline size_t channel_at(int j, int c, int C, int HW) {
  return (size_t(j / HW) * C + c) * HW + size_t(j % HW);
}

// The block's sum, handed to every thread (block_sum leaves it in thread 0).
__device__ inline double block_total(double v, double* red, double* shared_total) {
  const double total = block_sum(v, red);
  if (threadIdx.x == 0) *shared_total = total;
  __syncthreads();
  return *shared_total;
}

// x (N,C,HW) -> y, save_mean, save_inv_std; running_mean, running_var updated. Block c: channel c.
__global__ void batchnorm_forward_train_kernel_block(int N, int C, int HW, float eps,
                                                     float momentum, const float* x,
                                                     const float* gamma, const float* beta,
                                                     float* y, float* save_mean,
                                                     float* save_inv_std, float* running_mean,
                                                     float* running_var) {
  __shared__ double red[32];
  __shared__ double shared_total;
  const int c = blockIdx.x, M = N * HW;
  double acc = 0;
  for (int j = threadIdx.x; j < M; j += blockDim.x) acc += x[channel_at(j, c, C, HW)];
  const float mean = float(block_total(acc, red, &shared_total) / M);
  acc = 0;
  for (int j = threadIdx.x; j < M; j += blockDim.x) {
    const double d = double(x[channel_at(j, c, C, HW)]) - mean;
    acc += d * d;
  }
  const float var = float(block_total(acc, red, &shared_total) / M);
  const float inv_std = batchnorm_inv_std(var, eps);
  const float g = gamma[c], b = beta[c];
  for (int j = threadIdx.x; j < M; j += blockDim.x) {
    const size_t at = channel_at(j, c, C, HW);
    y[at] = batchnorm_normalize(x[at], mean, inv_std, g, b);
  }
  if (threadIdx.x == 0) {
    batchnorm_keep_stats(c, mean, var, inv_std, M, momentum, save_mean, save_inv_std, running_mean,
                         running_var);
  }
}

// x (N,C,HW) -> y with the running statistics, element-wise
__global__ void batchnorm_forward_infer_kernel_plain(size_t total, int C, int HW, float eps,
                                                     const float* x, const float* gamma,
                                                     const float* beta, const float* running_mean,
                                                     const float* running_var, float* y) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int c = int((i / HW) % C);
    y[i] = batchnorm_normalize(x[i], running_mean[c], batchnorm_inv_std(running_var[c], eps),
                               gamma[c], beta[c]);
  }
}

// x, dy (N,C,HW) -> dgamma, dbeta (C), dx unless nullptr. Block c: channel c.
__global__ void batchnorm_backward_kernel_block(int N, int C, int HW, const float* x,
                                                const float* dy, const float* gamma,
                                                const float* save_mean, const float* save_inv_std,
                                                float* dx, float* dgamma, float* dbeta) {
  __shared__ double red[32];
  __shared__ double shared_total;
  const int c = blockIdx.x, M = N * HW;
  const float mean = save_mean[c], inv_std = save_inv_std[c];
  double acc_dy = 0, acc_dy_xhat = 0;
  for (int j = threadIdx.x; j < M; j += blockDim.x) {
    const size_t at = channel_at(j, c, C, HW);
    acc_dy += dy[at];
    acc_dy_xhat += double(dy[at]) * ((x[at] - mean) * inv_std);
  }
  const double sum_dy = block_total(acc_dy, red, &shared_total);
  __syncthreads();  // every thread has read shared_total before it is written again
  const double sum_dy_xhat = block_total(acc_dy_xhat, red, &shared_total);
  if (threadIdx.x == 0) {
    dgamma[c] = float(sum_dy_xhat);
    dbeta[c] = float(sum_dy);
  }
  if (dx == nullptr) return;
  const float mean_dy = float(sum_dy / M), mean_dy_xhat = float(sum_dy_xhat / M);
  const float g = gamma[c];
  for (int j = threadIdx.x; j < M; j += blockDim.x) {
    const size_t at = channel_at(j, c, C, HW);
    dx[at] = batchnorm_input_grad(dy[at], (x[at] - mean) * inv_std, mean_dy, mean_dy_xhat, g,
                                  inv_std);
  }
}

}  // namespace

}  // namespace cuda

void CudaBackend::batchnorm_forward_train(int N, int C, int HW, float eps, float momentum,
                                          const float* x, const float* gamma, const float* beta,
                                          float* y, float* save_mean, float* save_inv_std,
                                          float* running_mean, float* running_var) {
  ctx_.bind();
  if (C == 0) return;
  cuda::batchnorm_forward_train_kernel_block<<<C, cuda::kBatchnormThreads, 0, ctx_.stream()>>>(
      N, C, HW, eps, momentum, x, gamma, beta, y, save_mean, save_inv_std, running_mean,
      running_var);
  PCNN_CUDA_CHECK_LAUNCH("batchnorm_forward_train_kernel_block");
}

void CudaBackend::batchnorm_forward_infer(int N, int C, int HW, float eps, const float* x,
                                          const float* gamma, const float* beta,
                                          const float* running_mean, const float* running_var,
                                          float* y) {
  ctx_.bind();
  const size_t total = size_t(N) * C * HW;
  if (total == 0) return;
  const int blocks = cuda::grid_for(total, cuda::kBatchnormThreads, ctx_.sm_count());
  cuda::batchnorm_forward_infer_kernel_plain<<<blocks, cuda::kBatchnormThreads, 0,
                                               ctx_.stream()>>>(total, C, HW, eps, x, gamma, beta,
                                                                running_mean, running_var, y);
  PCNN_CUDA_CHECK_LAUNCH("batchnorm_forward_infer_kernel_plain");
}

void CudaBackend::batchnorm_backward(int N, int C, int HW, const float* x, const float* dy,
                                     const float* gamma, const float* save_mean,
                                     const float* save_inv_std, float* dx, float* dgamma,
                                     float* dbeta) {
  ctx_.bind();
  if (C == 0) return;
  cuda::batchnorm_backward_kernel_block<<<C, cuda::kBatchnormThreads, 0, ctx_.stream()>>>(
      N, C, HW, x, dy, gamma, save_mean, save_inv_std, dx, dgamma, dbeta);
  PCNN_CUDA_CHECK_LAUNCH("batchnorm_backward_kernel_block");
}

}  // namespace pcnn
