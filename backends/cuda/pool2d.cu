// Standalone pooling ops of the cuda backend: layers that pool on their own (padded or not), and
// the fused convolutions' fallback when their windows overlap. Backward is written as a gather:
// each thread owns one input element and sums the windows that route to it, so there are no atomics and the
// sum order is the serial backend's (windows in row-major order); max routes to the window's
// first maximum, which is why cudnn launches it for max pooling too (pool2d.cuh).
#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/pool2d.cuh"
#include "core/pool_math.hpp"

namespace pcnn {

namespace cuda {

namespace {

// x (N,C,H,W) -> y (N,C,P,Q); one thread per output; windows clipped to the image
// (core/pool_math.hpp), the serial backend's code
__global__ void pool2d_forward_kernel_plain(PoolKind kind, Pool2dShape s, const float* x, float* y,
                                            uint8_t* argmax) {
  wait_for_previous_kernel();
  const int P = s.P(), Q = s.Q();
  const bool is_max = kind == PoolKind::Max;
  const size_t total = size_t(s.N) * s.C * P * Q;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int q = int(i % Q), p = int((i / Q) % P);
    const size_t nc = i / (size_t(P) * Q);
    const PoolWindow b = pool_window(s, p, q);
    int best;
    y[i] = pool_finish(pool_window_reduce(x + nc * s.H * s.W, s.W, b, is_max, best), b, is_max);
    if (is_max && argmax) argmax[i] = pool_argmax_byte(s, p, q, best);
  }
}

// argmax, y, dy (N,C,P,Q) -> dx (N,C,H,W); one thread per input element, gathering from the
// windows that hold it (pool_gather_argmax_grad)
__global__ void max_pool_backward_argmax_kernel(Pool2dShape s, Activation act,
                                                const uint8_t* argmax, const float* y,
                                                const float* dy, float* dx) {
  wait_for_previous_kernel();
  const int P = s.P(), Q = s.Q();
  const size_t total = size_t(s.N) * s.C * s.H * s.W;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int w = int(i % s.W), h = int((i / s.W) % s.H);
    const size_t o = i / (size_t(s.H) * s.W) * P * Q;
    int p_lo, p_hi, q_lo, q_hi;
    windows_covering(h, s.window, s.stride, s.pad, P, p_lo, p_hi);
    windows_covering(w, s.window, s.stride, s.pad, Q, q_lo, q_hi);
    dx[i] =
        pool_gather_argmax_grad(s, act, argmax + o, y + o, dy + o, h, w, p_lo, p_hi, q_lo, q_hi);
  }
}

// x (N,C,H,W), dy (N,C,P,Q) -> dx (N,C,H,W); one thread per input element
__global__ void pool2d_backward_kernel_gather(PoolKind kind, Pool2dShape s, const float* x,
                                              const float* dy, float* dx) {
  wait_for_previous_kernel();
  const int P = s.P(), Q = s.Q();
  const bool is_max = kind == PoolKind::Max;
  const size_t total = size_t(s.N) * s.C * s.H * s.W;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int w = int(i % s.W), h = int((i / s.W) % s.H);
    const size_t nc = i / (size_t(s.H) * s.W);
    const float* xi = x + nc * s.H * s.W;
    const float* dyo = dy + nc * P * Q;
    // The windows whose clipped range holds (h, w).
    int p_lo, p_hi, q_lo, q_hi;
    windows_covering(h, s.window, s.stride, s.pad, P, p_lo, p_hi);
    windows_covering(w, s.window, s.stride, s.pad, Q, q_lo, q_hi);
    dx[i] = pool_gather_grad(s, xi, dyo, is_max, h, w, p_lo, p_hi, q_lo, q_hi);
  }
}

constexpr int kThreads = 256;

}  // namespace

void pool2d_backward_gather(CudaContext& ctx, PoolKind kind, const Pool2dShape& s,
                            const float* x, const float* dy, float* dx, int blocks) {
  launch(ctx, "pool2d_backward_kernel_gather", pool2d_backward_kernel_gather, blocks,
         kPoolBackwardThreads, 0, kind, s, x, dy, dx);
}

}  // namespace cuda

void CudaBackend::pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x, float* y,
                                 uint8_t* argmax) {
  ctx_.bind();
  PCNN_CHECK(kind != PoolKind::None, "cuda pool2d_forward: pool kind None");
  const size_t total = s.y_size();
  if (total == 0) return;
  cuda::launch(ctx_, "pool2d_forward_kernel_plain", cuda::pool2d_forward_kernel_plain,
               cuda::grid_for(total, cuda::kThreads, ctx_.sm_count()), cuda::kThreads, 0, kind, s,
               x, y, argmax);
}

void CudaBackend::max_pool_backward_argmax(const Pool2dShape& s, Activation act,
                                           const uint8_t* argmax, const float* y, const float* dy,
                                           float* dx) {
  ctx_.bind();
  const size_t total = s.x_size();
  if (total == 0) return;
  cuda::launch(ctx_, "max_pool_backward_argmax_kernel", cuda::max_pool_backward_argmax_kernel,
               cuda::grid_for(total, cuda::kPoolBackwardThreads, ctx_.sm_count()),
               cuda::kPoolBackwardThreads, 0, s, act, argmax, y, dy, dx);
}

void CudaBackend::pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x,
                                  const float* dy, float* dx) {
  ctx_.bind();
  PCNN_CHECK(kind != PoolKind::None, "cuda pool2d_backward: pool kind None");
  const size_t total = s.x_size();
  if (total == 0) return;
  cuda::pool2d_backward_gather(
      ctx_, kind, s, x, dy, dx,
      cuda::grid_for(total, cuda::kPoolBackwardThreads, ctx_.sm_count()));
}

}  // namespace pcnn
