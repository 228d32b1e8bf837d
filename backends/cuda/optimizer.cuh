// Host entry points of the fused optimizer updates over the whole parameter arena.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cuda/cuda_context.hpp"

namespace pcnn::cuda {

enum class OptVariant { Auto, Scalar, Vec4 };

// v = momentum*v + (g + wd*p); p -= lr*v over n parameters; hyper float[kHyperCount] on device
void sgd_update(CudaContext& ctx, size_t n, float* p, const float* g, float* v,
                const float* hyper, OptVariant variant = OptVariant::Auto);
// Adam with bias correction, t = *step + 1
void adam_update(CudaContext& ctx, size_t n, float* p, const float* g, float* m, float* v,
                 const float* hyper, const int32_t* step, OptVariant variant = OptVariant::Auto);
// *counter += 1
void increment(CudaContext& ctx, int32_t* counter);

}  // namespace pcnn::cuda
