// What follows the convolution inside a forward kernel (conv2d_forward.cu, conv2d_forward_strip.cuh
// and the tensor-core kernel of conv2d_forward_mma.cuh): bias, activation, the fused pooling and
// what it keeps.
#pragma once

#include <cstdint>

#include "backends/cuda/act_io.cuh"
#include "backends/cuda/common.cuh"
#include "core/activation_math.hpp"
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

// One filter's PW x PW window of conv outputs (acc, bias included) through activation A: the
// window's max (and its argmax byte in best) or sum (the caller scales an average), the
// activated outputs written to act_out where it is kept (from act_at, rows Q apart).
template <Activation A, int PW>
__device__ __forceinline__ float pool_window_as(const FwdOut& o, size_t act_at, int Q,
                                                const float (&acc)[PW][PW], int& best) {
  float pooled = 0.f;
  best = 0;
#pragma unroll
  for (int i = 0; i < PW; ++i)
#pragma unroll
    for (int j = 0; j < PW; ++j) {
      const float v = activate<A>(acc[i][j]);
      if (PW > 1 && o.act_out) o.act_out[act_at + size_t(i) * Q + j] = v;
      if (o.pool == PoolKind::Max) {
        if ((i == 0 && j == 0) || v > pooled) {  // first maximum, row-major
          pooled = v;
          best = i * PW + j;
        }
      } else {
        pooled += v;
      }
    }
  return pooled;
}

// The epilogue of one thread's KPT x PW x PW block of conv outputs at pooled (pp,pq), for one
// activation A fixed at compile time.
template <Activation A, int KPT, int PW>
__device__ __forceinline__ void forward_epilogue_as(const Conv2dShape& s, const FwdOut& o, int n,
                                                    int kbase, int pp, int pq,
                                                    float (&acc)[KPT][PW][PW]) {
  const int P = s.P(), Q = s.Q();
#pragma unroll
  for (int kk = 0; kk < KPT; ++kk) {
    const int k = kbase + kk;
    if (k >= s.K) break;
    const size_t plane = (size_t(n) * s.K + k);
    int best;
    const size_t act_at = plane * P * Q + size_t(pp) * PW * Q + size_t(pq) * PW;
    const float pooled = pool_window_as<A, PW>(o, act_at, Q, acc[kk], best);
    if (PW > 1) {
      const int P2 = P / PW, Q2 = Q / PW;
      const size_t at = (plane * P2 + pp) * Q2 + pq;
      o.y.store(at, o.pool == PoolKind::Max ? pooled : pooled * (1.f / float(PW * PW)));
      if (o.pool == PoolKind::Max) o.argmax[at] = uint8_t(best);
    } else {
      o.y.store(plane * P * Q + pp * Q + pq, pooled);
    }
  }
}

// The activation is chosen once per thread, not once per element: with the switch inside the
// unrolled tile (five activations since ELU) the LeNet-5 step ran 3-4 % slower on the H200.
template <int KPT, int PW>
__device__ __forceinline__ void forward_epilogue(const Conv2dShape& s, const FwdOut& o, int n,
                                                 int kbase, int pp, int pq,
                                                 float (&acc)[KPT][PW][PW]) {
  dispatch_activation(o.act, [&](auto tag) {
    forward_epilogue_as<decltype(tag)::value>(s, o, n, kbase, pp, pq, acc);
  });
}

}  // namespace pcnn::cuda
