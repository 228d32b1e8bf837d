// OpenMP GEMM: C is split into whole register tiles among the threads (gemm_share), so each
// thread owns its outputs and the result does not depend on the thread count.
#include <omp.h>

#include "backends/openmp/openmp_backend.hpp"
#include "backends/openmp/parallel.hpp"

namespace pcnn {

// C(M,N) = alpha op(A)(M,K) op(B)(K,N) + beta C
void OpenMPBackend::gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                         const float* A, int lda, const float* B, int ldb, float beta, float* C,
                         int ldc) {
  const bool parallel = double(M) * N * K >= omp::kMinParallelMacs && threads_ > 1;
#pragma omp parallel num_threads(threads_) if (parallel)
  {
    const int tid = omp_get_thread_num();
    omp::gemm_share(tid, omp_get_num_threads(), trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb,
                    beta, C, ldc, scratch(tid).pack);
  }
}

}  // namespace pcnn
