// cudnn-backend GEMM: cublasSgemm on the backend's stream.
#include "backends/cudnn/cudnn_backend.hpp"

namespace pcnn {

// Row-major C(M,N) = alpha * op(A)(M,K) * op(B)(K,N) + beta * C.
// cuBLAS is column-major, and a row-major buffer read column-major is its transpose. So compute
// C^T(N,M) = op(B)^T * op(A)^T: pass B first, then A, with the same transpose flags and the same
// leading dimensions. beta == 0 makes cuBLAS write C without reading it.
void CudnnBackend::gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                        const float* A, int lda, const float* B, int ldb, float beta, float* C,
                        int ldc) {
  if (M <= 0 || N <= 0) return;
  PCNN_CUBLAS_CHECK(cublasSgemm(blas_, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A,
                                lda, &beta, C, ldc));
}

}  // namespace pcnn
