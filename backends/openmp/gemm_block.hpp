// The single-thread GEMM every openmp kernel calls from inside its own parallel region: packed
// panels and a register-blocked micro-kernel. Thread-safe as long as each thread has its own pack.
#pragma once

#include <vector>

namespace pcnn::omp {

// Packing buffers of one thread, grown on demand and kept between calls.
struct GemmPack {
  std::vector<float> a, b;
};

// Row-major C(M,N) = alpha * op(A)(M,K) * op(B)(K,N) + beta * C on the calling thread only.
// Same conventions as Backend::gemm (beta == 0 overwrites C, NaNs in C ignored). Every element
// of C is summed in the same k order whatever block of C a thread is given, so splitting C among
// threads never changes the result.
void gemm_block(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A,
                int lda, const float* B, int ldb, float beta, float* C, int ldc, GemmPack& pack);

// Register tile of the micro-kernel: how work is best split among threads (whole tiles each).
constexpr int kGemmMR = 6, kGemmNR = 16;

}  // namespace pcnn::omp

namespace pcnn::omp {

// The block of C one thread computed: rows [row_begin, row_end) x cols [col_begin, col_end).
struct Slab {
  int row_begin, row_end, col_begin, col_end;
};

// Thread tid's share (of nt) of one GEMM: C is cut into a grid of blocks of whole register tiles
// (the grid that best trades spread multiply-adds against repeated packing), and each thread
// computes its block with gemm_block. Called by every thread of a parallel region; the result does not depend on nt.
// Returns the slab, so that an epilogue can run on it without a barrier.
Slab gemm_share(int tid, int nt, bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
                GemmPack& pack);

}  // namespace pcnn::omp
