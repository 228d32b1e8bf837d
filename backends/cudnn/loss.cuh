// Softmax cross-entropy of the cudnn backend (host entry point): cuDNN's softmax would still
// leave the loss, the arg-max count and the gradient to a kernel, so one kernel does it all.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pcnn::vendor {

// logits (N,K), labels (N) -> dlogits (N,K) (skipped if nullptr); metrics[0..1] += loss, correct.
void launch_softmax_cross_entropy(cudaStream_t stream, int N, int K, const float* logits,
                                  const int32_t* labels, float* dlogits, float* metrics);

}  // namespace pcnn::vendor
