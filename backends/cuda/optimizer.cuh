// Launchers of the optimizer updates over the whole parameter arena, with the variant the kernel
// lab chooses; CudaBackend::sgd_update / adam_update call them with Auto.
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

}  // namespace pcnn::cuda
