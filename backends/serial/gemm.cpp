// Serial GEMM: op(A) and op(B) are packed into contiguous panels (which also absorbs the
// transposes), then an i-k-j loop over the panels whose inner loop the compiler vectorises.
#include <algorithm>
#include <vector>

#include "backends/serial/serial_backend.hpp"

namespace pcnn {

namespace {
constexpr int kBlockM = 64, kBlockK = 256, kBlockN = 512;
}

void SerialBackend::gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                         const float* A, int lda, const float* B, int ldb, float beta, float* C,
                         int ldc) {
  // C(M,N) = alpha op(A)(M,K) op(B)(K,N) + beta C
  for (int i = 0; i < M; ++i) {
    float* c = C + size_t(i) * ldc;
    if (beta == 0.f)
      for (int j = 0; j < N; ++j) c[j] = 0.f;
    else if (beta != 1.f)
      for (int j = 0; j < N; ++j) c[j] *= beta;
  }
  if (K == 0 || alpha == 0.f) return;
  // Panels are kept between calls: allocating 576 KB per call costs more than small GEMMs do.
  static thread_local std::vector<float> a_panel(size_t(kBlockM) * kBlockK),
      b_panel(size_t(kBlockK) * kBlockN);
  for (int j0 = 0; j0 < N; j0 += kBlockN) {
    const int nb = std::min(kBlockN, N - j0);
    for (int k0 = 0; k0 < K; k0 += kBlockK) {
      const int kb = std::min(kBlockK, K - k0);
      // b_panel (kb, nb) = op(B)[k0.., j0..]
      for (int k = 0; k < kb; ++k)
        for (int j = 0; j < nb; ++j)
          b_panel[size_t(k) * nb + j] = trans_b ? B[size_t(j0 + j) * ldb + (k0 + k)]
                                                : B[size_t(k0 + k) * ldb + (j0 + j)];
      for (int i0 = 0; i0 < M; i0 += kBlockM) {
        const int mb = std::min(kBlockM, M - i0);
        // a_panel (mb, kb) = alpha * op(A)[i0.., k0..]
        for (int i = 0; i < mb; ++i)
          for (int k = 0; k < kb; ++k)
            a_panel[size_t(i) * kb + k] =
                alpha * (trans_a ? A[size_t(k0 + k) * lda + (i0 + i)]
                                 : A[size_t(i0 + i) * lda + (k0 + k)]);
        for (int i = 0; i < mb; ++i) {
          float* c = C + size_t(i0 + i) * ldc + j0;
          const float* a = &a_panel[size_t(i) * kb];
          for (int k = 0; k < kb; ++k) {
            const float aik = a[k];
            const float* b = &b_panel[size_t(k) * nb];
            for (int j = 0; j < nb; ++j) c[j] += aik * b[j];
          }
        }
      }
    }
  }
}

}  // namespace pcnn
