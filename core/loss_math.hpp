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

// The first index of the largest logit (the predicted class). logit(k): the row's k-th logit
// as a float (a pointer's element, or a 16-bit value widened).
template <class Logit>
PCNN_HD inline int row_argmax_of(const Logit& logit, int K) {
  int best = 0;
  float top = logit(0);
  for (int k = 1; k < K; ++k) {
    const float v = logit(k);
    if (v > top) best = k, top = v;
  }
  return best;
}
PCNN_HD inline int row_argmax(const float* logits, int K) {
  return row_argmax_of([logits](int k) { return logits[k]; }, K);
}

template <class Logit>
PCNN_HD inline RowSoftmax row_softmax_stats_of(const Logit& logit, int K) {
  const int best = row_argmax_of(logit, K);
  RowSoftmax r{logit(best), 0.f, best};
  float sum = 0.f;
  for (int k = 0; k < K; ++k) sum += expf(logit(k) - r.max);
  r.log_sum = logf(sum);
  return r;
}
PCNN_HD inline RowSoftmax row_softmax_stats(const float* logits, int K) {
  return row_softmax_stats_of([logits](int k) { return logits[k]; }, K);
}

// d loss / d logit for the mean loss over N rows: (softmax - onehot) / N.
PCNN_HD inline float softmax_xent_grad(float logit, const RowSoftmax& r, bool is_label, int N) {
  return (expf(logit - r.max - r.log_sum) - (is_label ? 1.f : 0.f)) / float(N);
}

}  // namespace pcnn
