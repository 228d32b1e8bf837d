// Kokkos pooling: max (first maximum in window order wins) and average, no padding. The gradient
// is a gather: every input element sums what the windows containing it send back, so windows
// that overlap need no atomics and the sum runs in the reference's order.
#include "backends/kokkos/pool2d.hpp"

#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/activation_math.hpp"

namespace pcnn {

namespace kk {

// x (N,C,H,W) -> y (N,C,P,Q), one output per work item
void pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x, float* y) {
  const int P = s.P(), Q = s.Q(), H = s.H, W = s.W, window = s.window, stride = s.stride;
  const bool is_max = kind == PoolKind::Max;
  const float inv_area = 1.f / float(window * window);
  Kokkos::parallel_for("pcnn::pool2d_forward", range(s.y_size()), KOKKOS_LAMBDA(size_t idx) {
    const int q = int(idx % Q), p = int(idx / Q % P);
    const size_t nc = idx / (size_t(P) * Q);
    const float* win = x + nc * H * W + size_t(p * stride) * W + q * stride;
    float acc = is_max ? win[0] : 0.f;
    for (int r = 0; r < window; ++r)
      for (int t = 0; t < window; ++t) {
        const float v = win[r * W + t];
        if (is_max) {
          if (v > acc) acc = v;
        } else {
          acc += v;
        }
      }
    y[idx] = is_max ? acc : acc * inv_area;
  });
}

// x (N,C,H,W), dy (N,C,P,Q) -> dx (N,C,H,W), one input element per work item
void pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x, const float* dy,
                     Activation act, float* dx) {
  const int P = s.P(), Q = s.Q(), H = s.H, W = s.W, window = s.window, stride = s.stride;
  const bool is_max = kind == PoolKind::Max;
  const float inv_area = 1.f / float(window * window);
  Kokkos::parallel_for("pcnn::pool2d_backward", range(s.x_size()), KOKKOS_LAMBDA(size_t idx) {
    const int w = int(idx % W), h = int(idx / W % H);
    const size_t nc = idx / (size_t(H) * W);
    const float* xi = x + nc * H * W;
    const float* dyo = dy + nc * P * Q;
    // Windows p with p*stride <= h < p*stride + window, likewise q.
    const int p_lo = h < window ? 0 : (h - window) / stride + 1;
    const int q_lo = w < window ? 0 : (w - window) / stride + 1;
    const int p_hi = h / stride < P - 1 ? h / stride : P - 1;
    const int q_hi = w / stride < Q - 1 ? w / stride : Q - 1;
    float acc = 0.f;
    for (int p = p_lo; p <= p_hi; ++p)
      for (int q = q_lo; q <= q_hi; ++q) {
        const float g = dyo[p * Q + q];
        if (is_max) {
          const int base = p * stride * W + q * stride;
          int best = base;
          for (int r = 0; r < window; ++r)
            for (int t = 0; t < window; ++t) {
              const int i = base + r * W + t;
              if (xi[i] > xi[best]) best = i;
            }
          if (best == h * W + w) acc += g;
        } else {
          acc += g * inv_area;
        }
      }
    dx[idx] = act == Activation::None ? acc : acc * activation_derivative(act, xi[h * W + w]);
  });
}

}  // namespace kk

void KokkosBackend::pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x,
                                   float* y) {
  kk::pool2d_forward(kind, s, x, y);
}

void KokkosBackend::pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x,
                                    const float* dy, float* dx) {
  kk::pool2d_backward(kind, s, x, dy, Activation::None, dx);
}

}  // namespace pcnn
