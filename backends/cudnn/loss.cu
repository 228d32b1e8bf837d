// Softmax cross-entropy kernel: one block, a thread per row (grid-stride over rows), partial sums
// reduced in shared memory in a fixed order, so the metric sums are the same bits every run and
// no atomics touch the accumulators (a replayed graph adds exactly once per step).
#include "backends/cudnn/cudnn_check.hpp"
#include "backends/cudnn/loss.cuh"
#include "backends/backend.hpp"
#include "core/loss_math.hpp"

namespace pcnn::vendor {

namespace {

constexpr int kLossThreads = 512;  // rows per pass; a batch is rarely larger

// logits (N,K), labels (N) -> dlogits (N,K) = (softmax - onehot)/N; metrics += {loss, correct}
__global__ void softmax_xent_kernel_block(int N, int K, const float* logits,
                                          const int32_t* labels, float* dlogits,
                                          float* metrics) {
  __shared__ double loss_part[kLossThreads];
  __shared__ int correct_part[kLossThreads];
  double loss = 0.0;  // double, as serial sums it
  int correct = 0;
  for (int n = threadIdx.x; n < N; n += blockDim.x) {
    const float* row = logits + size_t(n) * K;
    const RowSoftmax stats = row_softmax_stats(row, K);
    const int label = labels[n];
    loss += stats.log_sum - (row[label] - stats.max);
    correct += stats.argmax == label;
    if (dlogits) {
      float* drow = dlogits + size_t(n) * K;
      for (int k = 0; k < K; ++k) drow[k] = softmax_xent_grad(row[k], stats, k == label, N);
    }
  }
  loss_part[threadIdx.x] = loss;
  correct_part[threadIdx.x] = correct;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) {
      loss_part[threadIdx.x] += loss_part[threadIdx.x + half];
      correct_part[threadIdx.x] += correct_part[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    metrics[kMetricLossSum] += float(loss_part[0]);
    metrics[kMetricCorrect] += float(correct_part[0]);
  }
}

}  // namespace

void launch_softmax_cross_entropy(cudaStream_t stream, int N, int K, const float* logits,
                                  const int32_t* labels, float* dlogits, float* metrics) {
  PCNN_CHECK(K > 0, "cudnn softmax_cross_entropy: K must be positive, got " << K);
  if (N <= 0) return;
  softmax_xent_kernel_block<<<1, kLossThreads, 0, stream>>>(N, K, logits, labels, dlogits,
                                                            metrics);
  PCNN_CUDA_CHECK_LAUNCH();
}

}  // namespace pcnn::vendor
