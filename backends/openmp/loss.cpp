// OpenMP softmax + cross-entropy: rows split statically; each thread sums its rows' loss and
// correct count privately, and the partials are added in thread order (deterministic).
#include <omp.h>

#include "backends/openmp/openmp_backend.hpp"
#include "core/loss_math.hpp"

namespace pcnn {

// logits (N,K), labels (N) -> dlogits (N,K); metrics += {loss sum, correct}
void OpenMPBackend::softmax_cross_entropy(int N, int K, const float* logits,
                                          const int32_t* labels, float* dlogits,
                                          float* metrics) {
  int team = 1;
#pragma omp parallel num_threads(threads_) if (N >= 2 * threads_)
  {
    const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
#pragma omp single
    team = nt;
    omp::ThreadScratch& mine = scratch(tid);
    mine.loss = 0.0;
    mine.correct = 0;
    const auto rows = omp::share(N, nt, tid);
    for (int n = rows.begin; n < rows.end; ++n) {
      const float* row_logits = logits + size_t(n) * K;
      const RowSoftmax row = row_softmax_stats(row_logits, K);
      const int label = labels[n];
      mine.loss += row.log_sum - (row_logits[label] - row.max);
      mine.correct += row.argmax == label;
      if (dlogits)
        for (int k = 0; k < K; ++k)
          dlogits[size_t(n) * K + k] = softmax_xent_grad(row_logits[k], row, k == label, N);
    }
  }
  double loss = 0.0;
  int correct = 0;
  for (int t = 0; t < team; ++t) {
    loss += scratch(t).loss;
    correct += scratch(t).correct;
  }
  metrics[kMetricLossSum] += float(loss);
  metrics[kMetricCorrect] += float(correct);
}

}  // namespace pcnn
