// Softmax cross-entropy arithmetic for one row of logits, shared by every backend's kernel so
// that all of them round the same way.
#pragma once

#include <cmath>

#include "core/host_device.hpp"

namespace pcnn {

struct RowSoftmax {
  float max;      // largest logit
  float log_sum;  // log(sum_k exp(logit_k - max))
  int argmax;     // first index of the largest logit
};

// The first index of the largest logit (the predicted class).
PCNN_HD inline int row_argmax(const float* logits, int K) {
  int best = 0;
  for (int k = 1; k < K; ++k)
    if (logits[k] > logits[best]) best = k;
  return best;
}

PCNN_HD inline RowSoftmax row_softmax_stats(const float* logits, int K) {
  const int best = row_argmax(logits, K);
  RowSoftmax r{logits[best], 0.f, best};
  float sum = 0.f;
  for (int k = 0; k < K; ++k) sum += expf(logits[k] - r.max);
  r.log_sum = logf(sum);
  return r;
}

// d loss / d logit for the mean loss over N rows: (softmax - onehot) / N.
PCNN_HD inline float softmax_xent_grad(float logit, const RowSoftmax& r, bool is_label, int N) {
  return (expf(logit - r.max - r.log_sum) - (is_label ? 1.f : 0.f)) / float(N);
}

}  // namespace pcnn
