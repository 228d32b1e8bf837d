// Serial pooling: max (first maximum in window order wins) and average, no padding.
#include "backends/serial/serial_backend.hpp"

namespace pcnn {

// x (N,C,H,W) -> y (N,C,P,Q)
void SerialBackend::pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x,
                                   float* y) {
  const int P = s.P(), Q = s.Q();
  const float inv_area = 1.f / float(s.window * s.window);
  for (int nc = 0; nc < s.N * s.C; ++nc) {
    const float* xi = x + size_t(nc) * s.H * s.W;
    float* yo = y + size_t(nc) * P * Q;
    for (int p = 0; p < P; ++p)
      for (int q = 0; q < Q; ++q) {
        const float* win = xi + size_t(p * s.stride) * s.W + q * s.stride;
        float acc = kind == PoolKind::Max ? win[0] : 0.f;
        for (int r = 0; r < s.window; ++r)
          for (int t = 0; t < s.window; ++t) {
            const float v = win[size_t(r) * s.W + t];
            if (kind == PoolKind::Max) {
              if (v > acc) acc = v;
            } else {
              acc += v;
            }
          }
        yo[size_t(p) * Q + q] = kind == PoolKind::Max ? acc : acc * inv_area;
      }
  }
}

// x (N,C,H,W), dy (N,C,P,Q) -> dx (N,C,H,W)
void SerialBackend::pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x,
                                    const float* dy, float* dx) {
  const int P = s.P(), Q = s.Q();
  const float inv_area = 1.f / float(s.window * s.window);
  fill(dx, 0.f, s.x_size());
  for (int nc = 0; nc < s.N * s.C; ++nc) {
    const float* xi = x + size_t(nc) * s.H * s.W;
    float* dxi = dx + size_t(nc) * s.H * s.W;
    const float* dyo = dy + size_t(nc) * P * Q;
    for (int p = 0; p < P; ++p)
      for (int q = 0; q < Q; ++q) {
        const size_t base = size_t(p * s.stride) * s.W + q * s.stride;
        const float g = dyo[size_t(p) * Q + q];
        if (kind == PoolKind::Max) {
          size_t best = base;
          for (int r = 0; r < s.window; ++r)
            for (int t = 0; t < s.window; ++t) {
              const size_t idx = base + size_t(r) * s.W + t;
              if (xi[idx] > xi[best]) best = idx;
            }
          dxi[best] += g;
        } else {
          for (int r = 0; r < s.window; ++r)
            for (int t = 0; t < s.window; ++t) dxi[base + size_t(r) * s.W + t] += g * inv_area;
        }
      }
  }
}

}  // namespace pcnn
