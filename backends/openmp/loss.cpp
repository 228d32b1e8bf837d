// OpenMP softmax + cross-entropy: rows split into fixed groups; each group sums its rows' loss
// and correct count, and the groups are added in order (the same for any thread count).
#include <omp.h>

#include <algorithm>

#include "backends/openmp/openmp_backend.hpp"
#include "core/loss_math.hpp"

namespace pcnn {

// logits (N,K), labels (N) -> dlogits (N,K); metrics += {loss sum, correct}
void OpenMPBackend::softmax_cross_entropy(int N, int K, const float* logits,
                                          const int32_t* labels, float* dlogits,
                                          float* metrics) {
  // Fixed groups of consecutive rows (their number depends on N alone), taken cyclically by the
  // threads; each group's sums are written once, and added in group order below.
  constexpr int kMaxGroups = omp::GroupPartials::kMaxGroups;
  const int G = std::max(1, std::min(N, kMaxGroups));
  double group_loss[kMaxGroups];
  int group_correct[kMaxGroups];
#pragma omp parallel num_threads(threads_) if (N >= 2 * threads_)
  {
    const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
    for (int g = tid; g < G; g += nt) {
      const auto rows = omp::share(N, G, g);
      double loss = 0.0;
      int correct = 0;
      for (int n = rows.begin; n < rows.end; ++n) {
        const float* row_logits = logits + size_t(n) * K;
        const RowSoftmax row = row_softmax_stats(row_logits, K);
        const int label = labels[n];
        loss += row.log_sum - (row_logits[label] - row.max);
        correct += row.argmax == label;
        if (dlogits)
          for (int k = 0; k < K; ++k)
            dlogits[size_t(n) * K + k] = softmax_xent_grad(row_logits[k], row, k == label, N);
      }
      group_loss[g] = loss;
      group_correct[g] = correct;
    }
  }
  double loss = 0.0;
  int correct = 0;
  for (int g = 0; g < G; ++g) {
    loss += group_loss[g];
    correct += group_correct[g];
  }
  metrics[kMetricLossSum] += float(loss);
  metrics[kMetricCorrect] += float(correct);
}

}  // namespace pcnn
