// Max-pooling backward of the cudnn backend (host entry point). cuDNN's own backward routes a
// window's gradient to whichever tied maximum it likes; the contract says the first one in
// row-major window order, and ties are common in real images (flat backgrounds through ReLU),
// so this gather kernel implements the contract's rule.
#pragma once

#include <cuda_runtime.h>

#include "core/shapes.hpp"

namespace pcnn::vendor {

// x (N,C,H,W), dy (N,C,P,Q) -> dx (N,C,H,W); overwrites dx.
void launch_maxpool_backward_first_max(cudaStream_t stream, const Pool2dShape& s, const float* x,
                                       const float* dy, float* dx);

}  // namespace pcnn::vendor
