// Serial convolution: per image, im2col then one GEMM (forward, weight gradient) or GEMM then
// col2im (data gradient).
#include "backends/serial/im2col.hpp"
#include "backends/serial/serial_backend.hpp"

namespace pcnn {

// x (N,C,H,W), w (K,C,R,S), b (K) -> y (N,K,P,Q): y_n (K,PQ) = w (K,CRS) * col_n (CRS,PQ) + b
void SerialBackend::conv2d_forward(const Conv2dShape& s, const float* x, const float* w,
                                   const float* b, float* y) {
  const int PQ = s.P() * s.Q(), CRS = s.C * s.R * s.S;
  col_.resize(size_t(CRS) * PQ);
  for (int n = 0; n < s.N; ++n) {
    im2col(s, x + size_t(n) * s.C * s.H * s.W, col_.data());
    float* yn = y + size_t(n) * s.K * PQ;
    gemm(false, false, s.K, PQ, CRS, 1.f, w, CRS, col_.data(), PQ, 0.f, yn, PQ);
  }
  if (b) bias_add(s.N, s.K, PQ, b, y);
}

// dy (N,K,P,Q), w (K,C,R,S) -> dx (N,C,H,W): col_n = w^T (CRS,K) * dy_n (K,PQ), then col2im
void SerialBackend::conv2d_backward_data(const Conv2dShape& s, const float* dy, const float* w,
                                         float* dx) {
  const int PQ = s.P() * s.Q(), CRS = s.C * s.R * s.S;
  col_.resize(size_t(CRS) * PQ);
  for (int n = 0; n < s.N; ++n) {
    gemm(true, false, CRS, PQ, s.K, 1.f, w, CRS, dy + size_t(n) * s.K * PQ, PQ, 0.f,
         col_.data(), PQ);
    col2im(s, col_.data(), dx + size_t(n) * s.C * s.H * s.W);
  }
}

// x (N,C,H,W), dy (N,K,P,Q) -> dw (K,CRS) = sum_n dy_n (K,PQ) * col_n^T (PQ,CRS); db = sum dy
void SerialBackend::conv2d_backward_weights(const Conv2dShape& s, const float* x, const float* dy,
                                            float* dw, float* db) {
  const int PQ = s.P() * s.Q(), CRS = s.C * s.R * s.S;
  col_.resize(size_t(CRS) * PQ);
  for (int n = 0; n < s.N; ++n) {
    im2col(s, x + size_t(n) * s.C * s.H * s.W, col_.data());
    gemm(false, true, s.K, CRS, PQ, 1.f, dy + size_t(n) * s.K * PQ, PQ, col_.data(), PQ,
         n == 0 ? 0.f : 1.f, dw, CRS);
  }
  if (s.N == 0) fill(dw, 0.f, s.w_size());
  if (db) bias_backward(s.N, s.K, PQ, dy, db);
}

}  // namespace pcnn
