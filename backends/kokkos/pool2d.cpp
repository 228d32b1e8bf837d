// Kokkos pooling: max (first maximum in window order wins) and average, no padding, one image
// row per team. The gradient is a gather: every input element sums what the windows containing
// it send back, so overlapping windows need no atomics and the sum runs in the reference's order.
#include "backends/kokkos/pool2d.hpp"

#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/activation_math.hpp"

namespace pcnn {

namespace kk {

// x (N,C,H,W) -> y (N,C,P,Q), one output row per team
void pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x, float* y) {
  const int P = s.P(), Q = s.Q(), H = s.H, W = s.W, window = s.window, stride = s.stride;
  const bool is_max = kind == PoolKind::Max;
  const float inv_area = 1.f / float(window * window);
  Kokkos::parallel_for("pcnn::pool2d_forward", row_policy(size_t(s.N) * s.C * P),
                       KOKKOS_LAMBDA(const Member& team) {
    const int row = team.league_rank(), p = row % P;
    const float* top = x + (size_t(row / P) * H + p * stride) * W;
    float* out = y + size_t(row) * Q;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, Q), [&](int q) {
      const float* win = top + q * stride;
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
      out[q] = is_max ? acc : acc * inv_area;
    });
  });
}

// x (N,C,H,W), dy (N,C,P,Q) -> dx (N,C,H,W). Windows that tile the image (stride == window, the
// usual case) each own their pixels: one pass per output row writes them, the window's first
// maximum gets dy and the rest 0. Overlapping windows: every input pixel gathers from the windows
// that contain it.
void pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x, const float* dy,
                     Activation act, float* dx) {
  const int P = s.P(), Q = s.Q(), H = s.H, W = s.W, window = s.window, stride = s.stride;
  const bool is_max = kind == PoolKind::Max;
  const float inv_area = 1.f / float(window * window);
  if (stride == window) {
    Kokkos::parallel_for("pcnn::pool2d_backward[tiling]", row_policy(size_t(s.N) * s.C * P),
                         KOKKOS_LAMBDA(const Member& team) {
      const int row = team.league_rank(), p = row % P;
      const size_t plane = size_t(row / P) * H * W;
      const float* xi = x + plane;
      float* dxi = dx + plane;
      const float* dyo = dy + size_t(row) * Q;
      // The band of input rows this output row owns; the last one also owns the rows and
      // columns no window covers, which get 0.
      const int h_end = p == P - 1 ? H : (p + 1) * stride;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, Q), [&](int q) {
        const int base = p * stride * W + q * stride;
        int best = base;
        if (is_max)
          for (int r = 0; r < window; ++r)
            for (int t = 0; t < window; ++t) {
              const int i = base + r * W + t;
              best = xi[i] > xi[best] ? i : best;
            }
        const float g = is_max ? dyo[q] : dyo[q] * inv_area;
        for (int r = 0; r < window; ++r)
          for (int t = 0; t < window; ++t) {
            const int i = base + r * W + t;
            float v = is_max ? (i == best ? g : 0.f) : g;
            if (act != Activation::None) v *= activation_derivative(act, xi[i]);
            dxi[i] = v;
          }
      });
      for (int h = p * stride; h < h_end; ++h) {
        const int w_begin = h < (p + 1) * stride ? Q * stride : 0;
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, w_begin, W),
                             [&](int w) { dxi[h * W + w] = 0.f; });
      }
    });
    return;
  }
  Kokkos::parallel_for("pcnn::pool2d_backward[gather]", row_policy(size_t(s.N) * s.C * H),
                       KOKKOS_LAMBDA(const Member& team) {
    const int row = team.league_rank(), h = row % H;
    const size_t nc = size_t(row / H);
    const float* xi = x + nc * H * W;
    const float* dyo = dy + nc * P * Q;
    // Windows p with p*stride <= h < p*stride + window, likewise q.
    const int p_lo = h < window ? 0 : (h - window) / stride + 1;
    const int p_hi = h / stride < P - 1 ? h / stride : P - 1;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, W), [&](int w) {
      const int q_lo = w < window ? 0 : (w - window) / stride + 1;
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
                best = xi[i] > xi[best] ? i : best;
              }
            if (best == h * W + w) acc += g;
          } else {
            acc += g * inv_area;
          }
        }
      dx[size_t(row) * W + w] =
          act == Activation::None ? acc : acc * activation_derivative(act, xi[h * W + w]);
    });
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
