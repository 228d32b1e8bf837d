// Host entry point of the softmax cross-entropy kernel.
#pragma once

#include <cstdint>

#include "backends/cuda/cuda_context.hpp"

namespace pcnn::cuda {

// logits (N,K), labels (N) -> dlogits (N,K) (skipped if nullptr); metrics += {loss, correct}
void softmax_cross_entropy(CudaContext& ctx, int N, int K, const float* logits,
                           const int32_t* labels, float* dlogits, float* metrics);

}  // namespace pcnn::cuda
