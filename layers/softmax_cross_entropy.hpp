// The loss layer: softmax + cross-entropy over the logits, its gradient, and the epoch's
// loss / correct-count accumulators, all in device memory (read back once per epoch).
#pragma once

#include "layers/layer.hpp"

namespace pcnn {

class SoftmaxCrossEntropy {
 public:
  explicit SoftmaxCrossEntropy(int classes) : classes_(classes) {}
  int classes() const { return classes_; }
  // logits (N, classes), labels (N) -> dlogits (N, classes) unless nullptr; metrics accumulate.
  void forward_backward(Backend& be, int N, const float* logits, const int32_t* labels,
                        float* dlogits, float* metrics) const {
    be.softmax_cross_entropy(N, classes_, logits, labels, dlogits, metrics);
  }

 private:
  int classes_;
};

}  // namespace pcnn
