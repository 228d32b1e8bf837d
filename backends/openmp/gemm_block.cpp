// The single-thread matrix GEMM and its split among threads (see gemm_block.hpp); the packed
// core itself is in gemm_kernel.hpp.
#include "backends/openmp/gemm_block.hpp"

#include <algorithm>
#include <cstddef>

#include "backends/openmp/gemm_kernel.hpp"
#include "backends/openmp/parallel.hpp"

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

namespace {

// How C is cut among nt threads: a grid of row blocks x column blocks of whole register tiles.
struct Grid {
  int rows = 1, cols = 1;
};

// The grid with the least estimated time per thread: its multiply-adds (16 per cycle) plus the
// packing it does (every thread packs its rows of op(A) and its columns of op(B), about a cycle
// per float). More blocks spread the multiply-adds but repeat the packing.
Grid choose_grid(int nt, int M, int N, int K) {
  const int tiles_m = (M + kGemmMR - 1) / kGemmMR, tiles_n = (N + kGemmNR - 1) / kGemmNR;
  Grid best;
  double best_cost = -1;
  for (int rows = 1; rows <= std::min(nt, tiles_m); ++rows) {
    const int cols = std::min(nt / rows, tiles_n);
    const int tm = (tiles_m + rows - 1) / rows, tn = (tiles_n + cols - 1) / cols;
    const double mr = double(std::min(M, tm * kGemmMR)), nc = double(std::min(N, tn * kGemmNR));
    const double cost = mr * nc * K / 16.0 + (mr + nc) * K;
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = {rows, cols};
    }
  }
  return best;
}

}  // namespace

Slab gemm_share(int tid, int nt, bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
                GemmPack& pack) {
  constexpr int MR = kGemmMR, NR = kGemmNR;
  const Grid g = choose_grid(nt, M, N, K);
  if (tid >= g.rows * g.cols) return {0, 0, 0, 0};
  const int tiles_m = (M + MR - 1) / MR, tiles_n = (N + NR - 1) / NR;
  const auto rt = share(tiles_m, g.rows, tid / g.cols), ct = share(tiles_n, g.cols, tid % g.cols);
  const int i0 = rt.begin * MR, i1 = std::min(M, rt.end * MR);
  const int j0 = ct.begin * NR, j1 = std::min(N, ct.end * NR);
  if (i0 >= i1 || j0 >= j1) return {0, 0, 0, 0};
  // Rows i0.. of op(A): A's row i0 when not transposed, its column i0 when transposed; the same
  // for the columns j0.. of op(B).
  const float* a = trans_a ? A + i0 : A + size_t(i0) * lda;
  const float* b = trans_b ? B + size_t(j0) * ldb : B + j0;
  gemm_block(trans_a, trans_b, i1 - i0, j1 - j0, K, alpha, a, lda, b, ldb, beta,
             C + size_t(i0) * ldc + j0, ldc, pack);
  return {i0, i1, j0, j1};
}

}  // namespace pcnn::omp
