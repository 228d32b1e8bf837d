// Serial softmax + cross-entropy, its gradient, and the loss / correct-count accumulators.
#include <cmath>

#include "backends/serial/serial_backend.hpp"
#include "core/loss_math.hpp"

namespace pcnn {

// logits (N,K), labels (N) -> dlogits (N,K); metrics += {loss sum, correct}
void SerialBackend::softmax_cross_entropy(int N, int K, const float* logits,
                                          const int32_t* labels, float* dlogits,
                                          float* metrics) {
  double loss = 0.0;
  int correct = 0;
  for (int n = 0; n < N; ++n) {
    const RowSoftmax row = row_softmax_stats(logits + size_t(n) * K, K);
    const int label = labels[n];
    loss += row.log_sum - (logits[size_t(n) * K + label] - row.max);
    correct += row.argmax == label;
    if (dlogits)
      for (int k = 0; k < K; ++k)
        dlogits[size_t(n) * K + k] =
            softmax_xent_grad(logits[size_t(n) * K + k], row, k == label, N);
  }
  metrics[kMetricLossSum] += float(loss);
  metrics[kMetricCorrect] += float(correct);
}

}  // namespace pcnn
