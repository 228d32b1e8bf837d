// Kokkos pooling as a free function, so the fused convolution forward can pool (with indices)
// what its kernel wrote. Its backward is Backend's composition of the ops (backend_default.cpp).
#pragma once

#include <cstdint>

#include "core/shapes.hpp"

namespace pcnn {
namespace kk {

// x (N,C,H,W) -> y (N,C,P,Q); overwrites y, and argmax (N,C,P,Q) for max unless nullptr.
void pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x, float* y, uint8_t* argmax);

}  // namespace kk
}  // namespace pcnn
