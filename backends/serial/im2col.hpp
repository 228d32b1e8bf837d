// im2col / col2im for one image: the bridge from convolution to GEMM. Shared by the CPU backends
// (openmp calls them per image, from its own threads).
#pragma once

#include "core/shapes.hpp"

namespace pcnn {

// x (C,H,W) of one image -> col (C*R*S, P*Q); out-of-image taps are 0. Overwrites col.
inline void im2col(const Conv2dShape& s, const float* x, float* col) {
  const int P = s.P(), Q = s.Q();
  for (int c = 0; c < s.C; ++c)
    for (int r = 0; r < s.R; ++r)
      for (int t = 0; t < s.S; ++t) {
        float* row = col + ((size_t(c) * s.R + r) * s.S + t) * P * Q;
        for (int p = 0; p < P; ++p) {
          const int h = p * s.stride - s.pad + r;
          float* out = row + size_t(p) * Q;
          if (h < 0 || h >= s.H) {
            for (int q = 0; q < Q; ++q) out[q] = 0.f;
            continue;
          }
          const float* in = x + (size_t(c) * s.H + h) * s.W;
          for (int q = 0; q < Q; ++q) {
            const int w = q * s.stride - s.pad + t;
            out[q] = (w >= 0 && w < s.W) ? in[w] : 0.f;
          }
        }
      }
}

// col (C*R*S, P*Q) -> dx (C,H,W) of one image: every tap added back where it came from.
// Overwrites dx.
inline void col2im(const Conv2dShape& s, const float* col, float* dx) {
  const int P = s.P(), Q = s.Q();
  for (size_t i = 0; i < size_t(s.C) * s.H * s.W; ++i) dx[i] = 0.f;
  for (int c = 0; c < s.C; ++c)
    for (int r = 0; r < s.R; ++r)
      for (int t = 0; t < s.S; ++t) {
        const float* row = col + ((size_t(c) * s.R + r) * s.S + t) * P * Q;
        for (int p = 0; p < P; ++p) {
          const int h = p * s.stride - s.pad + r;
          if (h < 0 || h >= s.H) continue;
          float* out = dx + (size_t(c) * s.H + h) * s.W;
          const float* in = row + size_t(p) * Q;
          for (int q = 0; q < Q; ++q) {
            const int w = q * s.stride - s.pad + t;
            if (w >= 0 && w < s.W) out[w] += in[q];
          }
        }
      }
}

}  // namespace pcnn
