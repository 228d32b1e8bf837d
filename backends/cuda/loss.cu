// Softmax cross-entropy of the cuda backend (cudnn inherits it; cuDNN's softmax would still
// leave the loss, the arg-max count and the gradient to a kernel). A thread per row (core/
// loss_math.hpp does the row) in blocks of kRowsPerBlock; each block sums its rows' metrics in
// a fixed order, and the last block to finish adds the blocks' sums in block order to the
// metric accumulators: deterministic, no atomics on the metrics. (One block of up to 1024 rows
// took 12 us at batch 1024 on the H200, 2.6 % of a LeNet-5 step, its rows queued on one SM.)
#include "backends/cuda/act_io.cuh"
#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"
#include "core/loss_math.hpp"

namespace pcnn {

namespace cuda {

namespace {

constexpr int kRowsPerBlock = 128;

// logits (N,K), labels (N) -> dlogits (N,K); metrics[0..1] += sums over rows. Logits and
// their gradient in fp32 or 16 bits (act_io.cuh; 16-bit: the gradient times *scale when scale
// is given, then rounded, and the widened logits into logits32 when given). With more than
// one block: partial_loss, partial_correct (gridDim.x) take the blocks' sums and counter
// (zero on entry and on exit) finds the last block.
__global__ void softmax_xent_kernel(int N, int K, ActIn logits, const int32_t* labels,
                                    const float* scale, float* logits32, ActOut dlogits,
                                    float* metrics, double* partial_loss, int* partial_correct,
                                    unsigned* counter) {
  wait_for_previous_kernel();
  __shared__ double red_loss[32];
  __shared__ int red_correct[32];
  double loss = 0.0;
  int correct = 0;
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n < N) {
    const size_t row = size_t(n) * K;
    const auto logit = [&](int k) { return logits.load(row + k); };
    const RowSoftmax r = row_softmax_stats_of(logit, K);
    const int label = labels[n];
    loss = double(r.log_sum - (logit(label) - r.max));
    correct = r.argmax == label;
    if (logits32)
      for (int k = 0; k < K; ++k) logits32[row + k] = logit(k);
    if (dlogits) {
      const float s = scale ? *scale : 1.f;
      for (int k = 0; k < K; ++k) {
        const float g = softmax_xent_grad(logit(k), r, k == label, N);
        dlogits.store(row + k, scale ? g * s : g);
      }
    }
  }
  const double loss_sum = block_sum(loss, red_loss);
  const int correct_sum = block_sum(correct, red_correct);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) {
      metrics[kMetricLossSum] += float(loss_sum);
      metrics[kMetricCorrect] += float(correct_sum);
    }
    return;
  }
  if (threadIdx.x == 0) {
    partial_loss[blockIdx.x] = loss_sum;
    partial_correct[blockIdx.x] = correct_sum;
  }
  if (!last_block_done(counter, gridDim.x) || threadIdx.x != 0) return;
  double total_loss = 0.0;
  int total_correct = 0;
  for (unsigned b = 0; b < gridDim.x; ++b) {
    total_loss += __ldcg(partial_loss + b);
    total_correct += __ldcg(partial_correct + b);
  }
  metrics[kMetricLossSum] += float(total_loss);
  metrics[kMetricCorrect] += float(total_correct);
}

void softmax_xent(CudaContext& ctx, int N, int K, const ActIn& logits, const int32_t* labels,
                  const float* scale, float* logits32, const ActOut& dlogits, float* metrics) {
  ctx.bind();
  PCNN_CHECK(K > 0, "cuda softmax_cross_entropy: K must be positive, got " << K);
  if (N == 0) return;
  const int blocks = (N + cuda::kRowsPerBlock - 1) / cuda::kRowsPerBlock;
  const int threads = blocks > 1 ? cuda::kRowsPerBlock : (N + 31) / 32 * 32;
  double* partial_loss = nullptr;
  int* partial_correct = nullptr;
  unsigned* counter = nullptr;
  if (blocks > 1) {
    // Doubles first (8-byte aligned: the scratch is a cudaMalloc base), then the counts.
    float* scratch = ctx.scratch(size_t(blocks) * 3);
    partial_loss = reinterpret_cast<double*>(scratch);
    partial_correct = reinterpret_cast<int*>(scratch + size_t(blocks) * 2);
    counter = ctx.counters(1);
  }
  launch(ctx, "softmax_xent_kernel", softmax_xent_kernel, blocks, threads, 0, N, K, logits, labels,
         scale, logits32, dlogits, metrics, partial_loss, partial_correct, counter);
}

}  // namespace

}  // namespace cuda

void CudaBackend::softmax_cross_entropy(int N, int K, const float* logits, const int32_t* labels,
                                        float* dlogits, float* metrics) {
  cuda::softmax_xent(ctx_, N, K, logits, labels, nullptr, nullptr, dlogits, metrics);
}

// One launch where the default takes three (widen, the fp32 loss, round); PCNN_LOSS16=0 runs
// the default instead (a same-run comparison).
void CudaBackend::softmax_cross_entropy_16(Precision p, int N, int K, const uint16_t* logits,
                                           const int32_t* labels, const float* scale,
                                           float* staging, float* logits32, uint16_t* dlogits,
                                           float* metrics) {
  if (!ctx_.loss16())
    return Backend::softmax_cross_entropy_16(p, N, K, logits, labels, scale, staging, logits32,
                                             dlogits, metrics);
  cuda::softmax_xent(ctx_, N, K, cuda::ActIn(p, logits), labels, scale, logits32,
                     dlogits ? cuda::ActOut(p, dlogits) : cuda::ActOut(), metrics);
}

}  // namespace pcnn
