// Direct, obviously-correct loops in double precision: the check on the serial reference itself
// (the other backends are checked against serial).
#pragma once

#include <vector>

#include "core/shapes.hpp"

namespace pcnn::test {

// x (N,C,H,W), w (K,C,R,S), b (K) or empty -> y (N,K,P,Q).
inline std::vector<float> naive_conv2d(const Conv2dShape& s, const std::vector<float>& x,
                                       const std::vector<float>& w, const std::vector<float>& b) {
  const int P = s.P(), Q = s.Q();
  std::vector<float> y(s.y_size());
  for (int n = 0; n < s.N; ++n)
    for (int k = 0; k < s.K; ++k)
      for (int p = 0; p < P; ++p)
        for (int q = 0; q < Q; ++q) {
          double acc = b.empty() ? 0.0 : double(b[k]);
          for (int c = 0; c < s.C; ++c)
            for (int r = 0; r < s.R; ++r)
              for (int t = 0; t < s.S; ++t) {
                const int h = p * s.stride - s.pad + r, ww = q * s.stride - s.pad + t;
                if (h < 0 || h >= s.H || ww < 0 || ww >= s.W) continue;
                acc += double(x[((size_t(n) * s.C + c) * s.H + h) * s.W + ww]) *
                       w[((size_t(k) * s.C + c) * s.R + r) * s.S + t];
              }
          y[((size_t(n) * s.K + k) * P + p) * Q + q] = float(acc);
        }
  return y;
}

// C(M,N) = alpha op(A) op(B) + beta C0 (C0 empty: beta ignored), row-major.
inline std::vector<float> naive_gemm(bool ta, bool tb, int M, int N, int K, float alpha,
                                     const std::vector<float>& A, const std::vector<float>& B,
                                     float beta, const std::vector<float>& C0) {
  std::vector<float> C(size_t(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0;
      for (int k = 0; k < K; ++k)
        acc += double(ta ? A[size_t(k) * M + i] : A[size_t(i) * K + k]) *
               (tb ? B[size_t(j) * K + k] : B[size_t(k) * N + j]);
      const double c0 = C0.empty() ? 0.0 : double(beta) * C0[size_t(i) * N + j];
      C[size_t(i) * N + j] = float(double(alpha) * acc + c0);
    }
  return C;
}

}  // namespace pcnn::test
