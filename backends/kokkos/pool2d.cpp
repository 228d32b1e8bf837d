// Kokkos pooling: max (first maximum in window order wins) and average, one image plane per
// team; padded windows are clipped to the image (core/pool_math.hpp). Unpadded 2x2 and 3x3
// windows are compiled for their size, so a CPU row loop vectorises.
// The gradient never scatters across windows: when windows tile the image (stride == window, the
// usual case) each window writes the pixels it owns; when they overlap or are padded, every input
// pixel gathers from the windows that contain it. No atomics, and sums run in the reference's
// order.
#include "backends/kokkos/pool2d.hpp"

#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/activation_math.hpp"
#include "core/pool_math.hpp"

namespace pcnn {

namespace kk {

// body(team, plane) for each (n, c) image plane of s, one team per plane.
template <class F>
void for_each_plane(const char* label, const Pool2dShape& s, const F& body) {
  Kokkos::parallel_for(label, plane_policy(size_t(s.N) * s.C), KOKKOS_LAMBDA(const Member& team) {
    body(team, size_t(team.league_rank()));
  });
}

// One window, WIN x WIN (WIN = 0: `window` at run time), top-left at win, rows W apart: the max
// or the sum of its elements, and (max) the offset of the first maximum.
template <int WIN>
KOKKOS_INLINE_FUNCTION float window_reduce(const float* win, int window, int W, bool is_max,
                                           int& best) {
  if constexpr (WIN == 2) {
    // Spelled out with selects only: a data-dependent branch here mispredicts on every other
    // window and costs more than the whole pass.
    const float a = win[0], b = win[1], c = win[W], d = win[W + 1];
    if (!is_max) {
      best = 0;
      return ((a + b) + c) + d;  // the reference's order
    }
    const int gb = b > a;
    const float m1 = gb ? b : a;
    const int gc = c > m1;
    const float m2 = gc ? c : m1;
    const int gd = d > m2;
    const int i2 = gb + gc * (W - gb);  // offset of the maximum so far, by arithmetic
    best = i2 + gd * (W + 1 - i2);
    return gd ? d : m2;
  }
  const int n = WIN > 0 ? WIN : window;
  float acc = win[0];
  best = 0;
  for (int r = 0; r < n; ++r)
    for (int t = 0; t < n; ++t) {
      if (r == 0 && t == 0) continue;
      const float v = win[r * W + t];
      if (is_max) {
        best = v > acc ? r * W + t : best;
        acc = v > acc ? v : acc;
      } else {
        acc += v;
      }
    }
  return acc;
}

// argmax: nullptr, or (max) the window place of each maximum (pool_argmax_byte).
template <int WIN>
void pool_forward_planes(bool is_max, const Pool2dShape& s, const float* x, float* y,
                         uint8_t* argmax) {
  const int P = s.P(), Q = s.Q(), H = s.H, W = s.W, window = s.window, stride = s.stride;
  const float inv_area = 1.f / float(window * window);
  for_each_plane("pcnn::pool2d_forward", s,
                 KOKKOS_LAMBDA(const Member& team, size_t plane) {
    const float* xi = x + plane * H * W;
    float* yo = y + plane * P * Q;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, P), [&](int p) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, Q), [&](int q) {
        int best;
        const float v = window_reduce<WIN>(xi + p * stride * W + q * stride, window, W, is_max, best);
        yo[p * Q + q] = is_max ? v : v * inv_area;
        // best = r * W + t, t < window <= W
        if (argmax) argmax[plane * P * Q + p * Q + q] = uint8_t(best / W * window + best % W);
      });
    });
  });
}

// Windows tile the image: output row p owns input rows p*stride .. (p+1)*stride - 1 (the last
// one also the rows below every window), each window its WIN x WIN block; pixels no window
// covers get 0.
template <int WIN>
void pool_backward_tiling(bool is_max, const Pool2dShape& s, const float* x, const float* dy,
                          float* dx) {
  const int P = s.P(), Q = s.Q(), H = s.H, W = s.W, window = s.window, stride = s.stride;
  const float inv_area = 1.f / float(window * window);
  for_each_plane("pcnn::pool2d_backward[tiling]", s,
                 KOKKOS_LAMBDA(const Member& team, size_t plane) {
    const float* xi = x + plane * H * W;
    float* dxi = dx + plane * H * W;
    const float* dyo = dy + plane * P * Q;
    const int n = WIN > 0 ? WIN : window;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, P), [&](int p) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, Q), [&](int q) {
        const int base = p * stride * W + q * stride;
        int best = 0;
        if (is_max) window_reduce<WIN>(xi + base, window, W, true, best);
        const float g = is_max ? dyo[p * Q + q] : dyo[p * Q + q] * inv_area;
        // Max: zero the window, then store over its first maximum (no compare per pixel:
        // compilers turn one into a branch that mispredicts on every other window).
        for (int r = 0; r < n; ++r)
          for (int t = 0; t < n; ++t) dxi[base + r * W + t] = is_max ? 0.f : g;
        if (is_max) dxi[base + best] = g;
      });
      const int h_end = p == P - 1 ? H : (p + 1) * stride;
      for (int h = p * stride; h < h_end; ++h) {
        const int w_begin = h < (p + 1) * stride ? Q * stride : 0;
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, w_begin, W),
                             [&](int w) { dxi[h * W + w] = 0.f; });
      }
    });
  });
}

// Padded windows (clipped to the image, core/pool_math.hpp), any size: one output per lane.
void pool_forward_clipped(bool is_max, const Pool2dShape& s, const float* x, float* y,
                          uint8_t* argmax) {
  const int P = s.P(), Q = s.Q(), H = s.H, W = s.W;
  for_each_plane(
      "pcnn::pool2d_forward[clipped]", s, KOKKOS_LAMBDA(const Member& team, size_t plane) {
        const float* xi = x + plane * H * W;
        float* yo = y + plane * P * Q;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, P), [&](int p) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, Q), [&](int q) {
            const PoolWindow b = pool_window(s, p, q);
            int best;
            yo[p * Q + q] = pool_finish(pool_window_reduce(xi, W, b, is_max, best), b, is_max);
            if (is_max && argmax)
              argmax[plane * P * Q + p * Q + q] = pool_argmax_byte(s, p, q, best);
          });
        });
      });
}

// Max pooling's gradient from its kept indices, through act: each window whose windows tile
// the image writes its own pixels (g = dy * act'(y) at the named one, 0 elsewhere); pixels no
// window covers get 0.
void max_pool_backward_argmax_tiling(const Pool2dShape& s, Activation act, const uint8_t* argmax,
                                     const float* y, const float* dy, float* dx) {
  const int P = s.P(), Q = s.Q(), H = s.H, W = s.W, n = s.window;
  for_each_plane(
      "pcnn::max_pool_backward_argmax[tiling]", s, KOKKOS_LAMBDA(const Member& team, size_t plane) {
        float* dxi = dx + plane * H * W;
        const size_t o = plane * P * Q;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, P), [&](int p) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, Q), [&](int q) {
            const size_t i = o + p * Q + q;
            const float g = activation_grad(act, dy, y, i);
            const int base = p * n * W + q * n, best = argmax[i];
            for (int r = 0; r < n; ++r)
              for (int t = 0; t < n; ++t) dxi[base + r * W + t] = r * n + t == best ? g : 0.f;
          });
          const int h_end = p == P - 1 ? H : (p + 1) * n;
          for (int h = p * n; h < h_end; ++h) {
            const int w_begin = h < (p + 1) * n ? Q * n : 0;
            Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, w_begin, W),
                                 [&](int w) { dxi[h * W + w] = 0.f; });
          }
        });
      });
}

// Overlapping or padded windows: every input pixel (h, w) of every plane gathers from the
// windows that hold it (windows_covering): dx = grad(plane, h, w, p_lo, p_hi, q_lo, q_hi).
template <class Grad>
void gather_planes(const char* label, const Pool2dShape& s, float* dx, const Grad& grad) {
  const int P = s.P(), Q = s.Q(), H = s.H, W = s.W, window = s.window, stride = s.stride,
            pad = s.pad;
  for_each_plane(
      label, s, KOKKOS_LAMBDA(const Member& team, size_t plane) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, H), [&](int h) {
          int p_lo, p_hi;
          windows_covering(h, window, stride, pad, P, p_lo, p_hi);
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, W), [&](int w) {
            int q_lo, q_hi;
            windows_covering(w, window, stride, pad, Q, q_lo, q_hi);
            dx[plane * H * W + h * W + w] = grad(plane, h, w, p_lo, p_hi, q_lo, q_hi);
          });
        });
      });
}

// Max pooling's gradient from its kept indices, any windows.
void max_pool_backward_argmax_gather(const Pool2dShape& s, Activation act, const uint8_t* argmax,
                                     const float* y, const float* dy, float* dx) {
  const size_t PQ = size_t(s.P()) * s.Q();
  gather_planes(
      "pcnn::max_pool_backward_argmax[gather]", s, dx,
      KOKKOS_LAMBDA(size_t plane, int h, int w, int p_lo, int p_hi, int q_lo, int q_hi) {
        const size_t o = plane * PQ;
        return pool_gather_argmax_grad(s, act, argmax + o, y + o, dy + o, h, w, p_lo, p_hi, q_lo,
                                       q_hi);
      });
}

// The pooling gradient from x, any windows (max recomputes each window's maximum).
void pool_backward_gather(bool is_max, const Pool2dShape& s, const float* x, const float* dy,
                          float* dx) {
  const size_t HW = size_t(s.H) * s.W, PQ = size_t(s.P()) * s.Q();
  gather_planes(
      "pcnn::pool2d_backward[gather]", s, dx,
      KOKKOS_LAMBDA(size_t plane, int h, int w, int p_lo, int p_hi, int q_lo, int q_hi) {
        return pool_gather_grad(s, x + plane * HW, dy + plane * PQ, is_max, h, w, p_lo, p_hi, q_lo,
                                q_hi);
      });
}

void pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x, float* y,
                    uint8_t* argmax) {
  const bool is_max = kind == PoolKind::Max;
  if (!is_max) argmax = nullptr;
  if (s.pad != 0) return pool_forward_clipped(is_max, s, x, y, argmax);
  if (s.window == 2) return pool_forward_planes<2>(is_max, s, x, y, argmax);
  if (s.window == 3) return pool_forward_planes<3>(is_max, s, x, y, argmax);
  pool_forward_planes<0>(is_max, s, x, y, argmax);
}

void max_pool_backward_argmax(const Pool2dShape& s, Activation act, const uint8_t* argmax,
                              const float* y, const float* dy, float* dx) {
  if (s.stride != s.window || s.pad != 0)
    return max_pool_backward_argmax_gather(s, act, argmax, y, dy, dx);
  max_pool_backward_argmax_tiling(s, act, argmax, y, dy, dx);
}

void pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x, const float* dy,
                     float* dx) {
  const bool is_max = kind == PoolKind::Max;
  if (s.stride != s.window || s.pad != 0) return pool_backward_gather(is_max, s, x, dy, dx);
  if (s.window == 2) return pool_backward_tiling<2>(is_max, s, x, dy, dx);
  if (s.window == 3) return pool_backward_tiling<3>(is_max, s, x, dy, dx);
  pool_backward_tiling<0>(is_max, s, x, dy, dx);
}

}  // namespace kk

// x (N,C,H,W) -> y (N,C,P,Q) and, for max given one, argmax (N,C,P,Q)
void KokkosBackend::pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x, float* y,
                                   uint8_t* argmax) {
  PCNN_KK_REGION(pool2d_forward);
  kk::pool2d_forward(kind, s, x, y, argmax);
}

// argmax, y, dy (N,C,P,Q) -> dx (N,C,H,W)
void KokkosBackend::max_pool_backward_argmax(const Pool2dShape& s, Activation act,
                                             const uint8_t* argmax, const float* y, const float* dy,
                                             float* dx) {
  PCNN_KK_REGION(max_pool_backward_argmax);
  kk::max_pool_backward_argmax(s, act, argmax, y, dy, dx);
}

// x (N,C,H,W), dy (N,C,P,Q) -> dx (N,C,H,W)
void KokkosBackend::pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x,
                                    const float* dy, float* dx) {
  PCNN_KK_REGION(pool2d_backward);
  kk::pool2d_backward(kind, s, x, dy, dx);
}

}  // namespace pcnn
