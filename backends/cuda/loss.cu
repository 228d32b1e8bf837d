// Softmax cross-entropy of the cuda backend (cudnn inherits it; cuDNN's softmax would still
// leave the loss, the arg-max count and the gradient to a kernel). One block: a thread per row
// (core/loss_math.hpp does the row), then a fixed-order block sum into the metric accumulators,
// so the metrics are deterministic and no atomics are needed. Batches are small enough that one
// block is never the bottleneck.
#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"
#include "core/loss_math.hpp"

namespace pcnn {

namespace cuda {

namespace {

// logits (N,K), labels (N) -> dlogits (N,K); metrics[0..1] += sums over rows
__global__ void softmax_xent_kernel_block(int N, int K, const float* logits,
                                          const int32_t* labels, float* dlogits,
                                          float* metrics) {
  wait_for_previous_kernel();
  __shared__ double red_loss[32];
  __shared__ int red_correct[32];
  double loss = 0.0;
  int correct = 0;
  for (int n = threadIdx.x; n < N; n += blockDim.x) {
    const float* row = logits + size_t(n) * K;
    const RowSoftmax r = row_softmax_stats(row, K);
    const int label = labels[n];
    loss += double(r.log_sum - (row[label] - r.max));
    correct += r.argmax == label;
    if (dlogits)
      for (int k = 0; k < K; ++k)
        dlogits[size_t(n) * K + k] = softmax_xent_grad(row[k], r, k == label, N);
  }
  const double loss_sum = block_sum(loss, red_loss);
  const int correct_sum = block_sum(correct, red_correct);
  if (threadIdx.x == 0) {
    metrics[kMetricLossSum] += float(loss_sum);
    metrics[kMetricCorrect] += float(correct_sum);
  }
}

}  // namespace

}  // namespace cuda

void CudaBackend::softmax_cross_entropy(int N, int K, const float* logits, const int32_t* labels,
                                        float* dlogits, float* metrics) {
  ctx_.bind();
  PCNN_CHECK(K > 0, "cuda softmax_cross_entropy: K must be positive, got " << K);
  if (N == 0) return;
  const int threads = N >= 1024 ? 1024 : (N + 31) / 32 * 32;
  cuda::launch(ctx_, "softmax_xent_kernel_block", cuda::softmax_xent_kernel_block, 1, threads, 0, N,
               K, logits, labels, dlogits, metrics);
}

}  // namespace pcnn
