// The single-thread matrix GEMM and its split among threads (see gemm_block.hpp); the packed
// core itself is in gemm_kernel.hpp.
#include "backends/openmp/gemm_block.hpp"

#include <algorithm>
#include <cstddef>

#include "backends/openmp/gemm_kernel.hpp"

namespace pcnn::omp {

void gemm_block(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A,
                int lda, const float* B, int ldb, float beta, float* C, int ldc, GemmPack& pack) {
  // C(M,N) = alpha op(A)(M,K) op(B)(K,N) + beta C
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == 0.f) {
    for (int i = 0; i < M; ++i) {
      float* c = C + size_t(i) * ldc;
      for (int j = 0; j < N; ++j) c[j] = beta == 0.f ? 0.f : beta * c[j];
    }
    return;
  }
  kernel::gemm_core(trans_a, M, N, K, alpha, A, lda, kernel::MatrixB{trans_b, B, ldb}, beta,
                    kernel::MatrixC{C, ldc}, pack);
}

Slab gemm_share(int tid, int nt, bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
                GemmPack& pack) {
  constexpr int MR = kGemmMR, NR = kGemmNR;
  const int tiles_m = (M + MR - 1) / MR, tiles_n = (N + NR - 1) / NR;
  // Splitting rows makes every thread pack all of op(B) (K x N), splitting columns all of op(A)
  // (M x K): split the way that repeats less packing, unless it leaves threads without a tile.
  bool by_rows;
  if ((tiles_m >= nt) == (tiles_n >= nt))
    by_rows = tiles_m >= nt ? double(K) * N <= double(M) * K : tiles_m >= tiles_n;
  else
    by_rows = tiles_m >= nt;
  const int tiles = by_rows ? tiles_m : tiles_n;
  const int base = tiles / nt, extra = tiles % nt;
  const int t0 = tid * base + std::min(tid, extra), t1 = t0 + base + (tid < extra ? 1 : 0);
  if (t0 >= t1) return {0, 0, 0, 0};
  if (by_rows) {
    const int i0 = t0 * MR, i1 = std::min(M, t1 * MR);
    // Rows i0.. of op(A): A's row i0 when not transposed, A's column i0 when transposed.
    const float* a = trans_a ? A + i0 : A + size_t(i0) * lda;
    gemm_block(trans_a, trans_b, i1 - i0, N, K, alpha, a, lda, B, ldb, beta,
               C + size_t(i0) * ldc, ldc, pack);
    return {i0, i1, 0, N};
  }
  const int j0 = t0 * NR, j1 = std::min(N, t1 * NR);
  const float* b = trans_b ? B + size_t(j0) * ldb : B + j0;
  gemm_block(trans_a, trans_b, M, j1 - j0, K, alpha, A, lda, b, ldb, beta, C + j0, ldc, pack);
  return {0, M, j0, j1};
}

}  // namespace pcnn::omp
