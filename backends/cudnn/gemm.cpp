// cudnn-backend GEMM: cublasSgemm on the base's stream; and the fully connected layer, kept
// composed of it (Backend's default) rather than the cuda base's fused linear kernels.
#include "backends/cudnn/cudnn_backend.hpp"

namespace pcnn {

// Row-major C(M,N) = alpha * op(A)(M,K) * op(B)(K,N) + beta * C.
// cuBLAS is column-major, and a row-major buffer read column-major is its transpose. So compute
// C^T(N,M) = op(B)^T * op(A)^T: pass B first, then A, with the same transpose flags and the same
// leading dimensions. beta == 0 makes cuBLAS write C without reading it.
void CudnnBackend::gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                        const float* A, int lda, const float* B, int ldb, float beta, float* C,
                        int ldc) {
  context().bind();
  if (M <= 0 || N <= 0) return;
  PCNN_CUBLAS_CHECK(cublasSgemm(blas(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A,
                                lda, &beta, C, ldc));
}

// GEMM (cuBLAS), bias (cuDNN), activation (the base's kernel).
void CudnnBackend::linear_forward(int N, int in, int out, Activation act, const float* x,
                                  const float* w, const float* b, float* y) {
  Backend::linear_forward(N, in, out, act, x, w, b, y);
}

// 16 bits: widen, the cuBLAS path above, round (Backend's default), not the cuda base's native
// kernels.
void CudnnBackend::linear_forward_16(Precision p, int N, int in, int out, Activation act,
                                     const uint16_t* x, const float* w, const float* b,
                                     float* staging, uint16_t* y) {
  Backend::linear_forward_16(p, N, in, out, act, x, w, b, staging, y);
}

void CudnnBackend::linear_backward_16(Precision p, int N, int in, int out, Activation act,
                                      const uint16_t* x, const float* w, const uint16_t* y,
                                      const uint16_t* dy, float* scratch, float* staging,
                                      uint16_t* dx, float* dw, float* db) {
  Backend::linear_backward_16(p, N, in, out, act, x, w, y, dy, scratch, staging, dx, dw, db);
}

// Activation derivative (the base's kernel), then GEMMs (cuBLAS) and the bias gradient (cuBLAS).
void CudnnBackend::linear_backward(int N, int in, int out, Activation act, const float* x,
                                   const float* w, const float* y, const float* dy,
                                   float* scratch, float* dx, float* dw, float* db) {
  Backend::linear_backward(N, in, out, act, x, w, y, dy, scratch, dx, dw, db);
}

}  // namespace pcnn
