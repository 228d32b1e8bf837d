// Host entry points of the elementwise kernels: fill, bias add / bias gradient, activations.
#pragma once

#include <cstddef>

#include "backends/cuda/cuda_context.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda {

// dst[0..n) = value
void fill(CudaContext& ctx, float* dst, float value, size_t n);
// y (N,C,HW) += b (C)
void bias_add(CudaContext& ctx, int N, int C, int HW, const float* b, float* y);
// dy (N,C,HW) -> db (C), overwritten; one block per channel, so the sum order is fixed
void bias_backward(CudaContext& ctx, int N, int C, int HW, const float* dy, float* db);
// y = act(x); x == y allowed
void activation_forward(CudaContext& ctx, Activation act, size_t n, const float* x, float* y);
// dx = dy * act'(y); dy == dx allowed
void activation_backward(CudaContext& ctx, Activation act, size_t n, const float* y,
                         const float* dy, float* dx);

}  // namespace pcnn::cuda
