// What follows the convolution inside a forward kernel (conv2d_forward.cu and the tensor-core
// kernel of conv2d_forward_mma.cuh): bias, activation, the fused pooling and what it keeps.
#pragma once

#include <cstdint>

#include "backends/cuda/act_io.cuh"
#include "core/shapes.hpp"

namespace pcnn::cuda {

// PW (the kernels' template argument) is the pooling window == stride; PW == 1 means no pooling
// inside: y gets the activation's output (the pre-pool buffer when a pooling runs after the
// kernel).
struct FwdOut {
  const float* bias;
  Activation act;
  PoolKind pool;
  float* act_out;   // PW > 1: the pre-pool output, written only if kept (avg with an activation)
  uint8_t* argmax;  // PW > 1, max: each window's maximum (pool_argmax_byte: i * PW + j)
  ActOut y;
};

}  // namespace pcnn::cuda
