// First-maximum max-pooling backward: one thread per input pixel gathers the gradient of every
// window that covers it and picks it as its first maximum ("push"-free: no atomics, no races,
// overlapping windows included).
#include "backends/cudnn/cudnn_check.hpp"
#include "backends/cudnn/launch.cuh"
#include "backends/cudnn/pool2d.cuh"

namespace pcnn::vendor {

namespace {

// x (N,C,H,W), dy (N,C,P,Q) -> dx (N,C,H,W)
__global__ void maxpool_backward_kernel_first_max(Pool2dShape s, const float* x, const float* dy,
                                                  float* dx) {
  const int P = s.P(), Q = s.Q();
  const size_t n = size_t(s.N) * s.C * s.H * s.W;
  PCNN_GRID_STRIDE_LOOP(i, n) {
    const int w = int(i % s.W), h = int(i / s.W % s.H);
    const size_t plane = i / (size_t(s.H) * s.W);
    const float* xp = x + plane * s.H * s.W;
    const float* dyp = dy + plane * P * Q;
    // Windows p with p*stride <= h < p*stride + window (and likewise q).
    const int p_lo = h >= s.window ? (h - s.window) / s.stride + 1 : 0;
    const int q_lo = w >= s.window ? (w - s.window) / s.stride + 1 : 0;
    const int p_hi = min(P - 1, h / s.stride), q_hi = min(Q - 1, w / s.stride);
    float g = 0.f;
    for (int p = p_lo; p <= p_hi; ++p)
      for (int q = q_lo; q <= q_hi; ++q) {
        const int h0 = p * s.stride, w0 = q * s.stride;
        int best = h0 * s.W + w0;
        for (int r = 0; r < s.window; ++r)
          for (int t = 0; t < s.window; ++t) {
            const int idx = (h0 + r) * s.W + w0 + t;
            if (xp[idx] > xp[best]) best = idx;
          }
        if (best == h * s.W + w) g += dyp[p * Q + q];
      }
    dx[i] = g;
  }
}

}  // namespace

void launch_maxpool_backward_first_max(cudaStream_t stream, const Pool2dShape& s, const float* x,
                                       const float* dy, float* dx) {
  const size_t n = size_t(s.N) * s.C * s.H * s.W;
  maxpool_backward_kernel_first_max<<<grid_for(n), kThreads, 0, stream>>>(s, x, dy, dx);
  PCNN_CUDA_CHECK_LAUNCH();
}

}  // namespace pcnn::vendor
