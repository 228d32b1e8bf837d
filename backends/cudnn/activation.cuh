// Elementwise activation kernels of the cudnn backend (host entry points). They run the shared
// core/activation_math.hpp rather than cudnnActivation*: the contract wants every backend to
// round these the same way, and cuDNN's tanh/sigmoid are not guaranteed to match tanhf/expf.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "core/shapes.hpp"

namespace pcnn::vendor {

// y[i] = act(x[i]); x == y allowed.
void launch_activation_forward(cudaStream_t stream, Activation act, size_t n, const float* x,
                               float* y);
// dx[i] = dy[i] * act'(y[i]); dy == dx allowed.
void launch_activation_backward(cudaStream_t stream, Activation act, size_t n, const float* y,
                                const float* dy, float* dx);

}  // namespace pcnn::vendor
