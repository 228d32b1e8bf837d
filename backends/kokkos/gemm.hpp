// The one GEMM engine of the kokkos backend: C(M,N) = epilogue(op(A)(M,K) * op(B)(K,N)), one
// team per output tile (and per slice of K when the reduction is long), the A and B tiles staged
// in team scratch, a register micro-tile per thread. A and B are read through "gather" operands,
// so one kernel is a plain GEMM (either transpose) or an implicit-GEMM convolution that never
// materialises im2col. Long reductions are split across teams and summed by a second kernel in a
// fixed order: results are deterministic and no atomics are used.
#pragma once

#include <string>
#include <utility>

#include "backends/kokkos/host_simd.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/activation_math.hpp"

namespace pcnn {
namespace kk {

KOKKOS_INLINE_FUNCTION int imin(int a, int b) { return a < b ? a : b; }

// Element (row, col) of an operand lives at p[row offset + col offset]: the maps below turn a row
// or column index into its offset. Convolution sources are zero-padded copies (conv2d.cpp), so
// every im2col element is such a sum and no bounds are checked while staging.

// i -> i * stride: the rows (or columns) of a plain matrix.
// Each map also fills offsets first .. first+count-1 by stepping instead of dividing, for a CPU
// thread that decodes a whole tile edge alone.
struct StridedMap {
  int stride;
  KOKKOS_INLINE_FUNCTION int operator()(int i) const { return i * stride; }
  KOKKOS_INLINE_FUNCTION void fill(int first, int count, int* out) const {
    const int st = stride;  // locals: stores to out could alias the members otherwise
    for (int i = 0; i < count; ++i) out[i] = (first + i) * st;
  }
};

// j -> (n, i), i < inner: block n starts at n * outer (one image of a batch, one filter).
struct BlockMap {
  int inner, outer;
  KOKKOS_INLINE_FUNCTION int operator()(int j) const {
    const int n = j / inner;
    return n * outer + (j - n * inner);
  }
  KOKKOS_INLINE_FUNCTION void fill(int first, int count, int* out) const {
    const int in = inner, ou = outer;
    int n = first / in, i = first - n * in;
    for (int e = 0; e < count; ++e) {
      out[e] = n * ou + i;
      if (++i == in) { i = 0; ++n; }
    }
  }
};

// j -> (n, p, q), output position (p, q) of image n on a P x Q grid, seen from the (padded)
// input: the window's corner at n*image + p*stride*row + q*stride.
struct PixelMap {
  int P, Q, stride, row, image;
  KOKKOS_INLINE_FUNCTION int operator()(int j) const {
    const int n = j / (P * Q), pq = j - n * (P * Q);
    const int p = pq / Q, q = pq - p * Q;
    return n * image + (p * row + q) * stride;
  }
  KOKKOS_INLINE_FUNCTION void fill(int first, int count, int* out) const {
    const int P_ = P, Q_ = Q, st = stride, row_step = row * stride, img = image;
    int n = first / (P_ * Q_), pq = first - n * (P_ * Q_);
    int p = pq / Q_, q = pq - p * Q_;
    int base = n * img + p * row_step;  // offset of (n, p, 0)
    for (int e = 0; e < count; ++e) {
      out[e] = base + q * st;
      if (++q == Q_) {
        q = 0;
        base += row_step;
        if (++p == P_) {
          p = 0;
          ++n;
          base = n * img;
        }
      }
    }
  }
};

// k -> (c, r, s), filter tap (r, s) of channel c: at c*plane + r*row + s. flip reads the window
// backwards, (R-1-r, S-1-s), as the data gradient does.
struct WindowMap {
  int R, S, row, plane;
  bool flip;
  KOKKOS_INLINE_FUNCTION int operator()(int k) const {
    const int c = k / (R * S), rs = k - c * (R * S);
    int r = rs / S, s = rs - r * S;
    if (flip) {
      r = R - 1 - r;
      s = S - 1 - s;
    }
    return c * plane + r * row + s;
  }
  KOKKOS_INLINE_FUNCTION void fill(int first, int count, int* out) const {
    const int R_ = R, S_ = S, row_ = row, plane_ = plane;
    const bool flip_ = flip;
    int c = first / (R_ * S_), rs = first - c * (R_ * S_);
    int r = rs / S_, s = rs - r * S_;
    for (int e = 0; e < count; ++e) {
      out[e] = flip_ ? c * plane_ + (R_ - 1 - r) * row_ + (S_ - 1 - s) : c * plane_ + r * row_ + s;
      if (++s == S_) {
        s = 0;
        if (++r == R_) { r = 0; ++c; }
      }
    }
  }
};

// An operand: element (row, col) = p[rows(row) + cols(col)].
template <class RowMap, class ColMap>
struct Gather {
  const float* p;
  RowMap rows;
  ColMap cols;
};

template <class RowMap, class ColMap>
Gather<RowMap, ColMap> gather(const float* p, RowMap rows, ColMap cols) {
  return {p, rows, cols};
}

// A row-major matrix with row stride ld, read as op(X) = X^T when trans.
inline Gather<StridedMap, StridedMap> matrix(const float* p, int ld, bool trans) {
  return trans ? gather(p, StridedMap{1}, StridedMap{ld}) : gather(p, StridedMap{ld}, StridedMap{1});
}

// Where C(i, j) goes: p[i * row_stride + cols(j)].
template <class ColMap>
struct GemmOutput {
  float* p;
  int row_stride;
  ColMap cols;
};

// C = act(alpha * acc + beta * C + row_bias[i] + col_bias[j]); C is not read when beta == 0.
// The activation is a template argument, chosen where the GEMM is launched (dispatch_activation),
// so every epilogue is compiled for its own activation.
template <Activation A = Activation::None>
struct GemmEpilogue {
  float alpha = 1.f, beta = 0.f;
  const float* row_bias = nullptr;
  const float* col_bias = nullptr;

  KOKKOS_INLINE_FUNCTION float apply(float acc, int i, int j, const float* c) const {
    float v = alpha * acc;
    if (beta != 0.f) v += beta * *c;
    if (row_bias) v += row_bias[i];
    if (col_bias) v += col_bias[j];
    return activate<A>(v);
  }

  // apply() over row[0..n) of output row i, columns j0.., in place; old C at dst[cols[j]]. The
  // same operations in the same order, one at a time so each loop vectorises.
  KOKKOS_INLINE_FUNCTION void apply_row(float* row, int n, int i, int j0, const float* dst,
                                        const int* cols) const {
    for (int j = 0; j < n; ++j) row[j] *= alpha;
    if (beta != 0.f)
      for (int j = 0; j < n; ++j) row[j] += beta * dst[cols[j]];
    if (row_bias)
      for (int j = 0; j < n; ++j) row[j] += row_bias[i];
    if (col_bias)
      for (int j = 0; j < n; ++j) row[j] += col_bias[j0 + j];
    if constexpr (A != Activation::None)
      for (int j = 0; j < n; ++j) row[j] = activate<A>(row[j]);
  }
};

// Splits offsets[0..n) into runs of consecutive values: run r is [runs[r], runs[r+1]).
KOKKOS_INLINE_FUNCTION int find_runs(const int* offsets, int n, int* runs) {
  if (n == 0) {
    runs[0] = 0;
    return 0;
  }
  runs[0] = 0;
  int count = 1;
  for (int j = 1; j < n; ++j) {  // branch-free: always store, advance only at a break
    runs[count] = j;
    count += offsets[j] != offsets[j - 1] + 1;
  }
  runs[count] = n;
  return count;
}

// Tile shapes. CPU: one thread per team walks its tile in 4x16 register blocks (the 16 columns
// vectorise), with a deep K slice so the accumulators in scratch are revisited rarely. GPU: 256
// threads per 64x64 tile, 4x4 outputs each, a K slice of 16.
struct GemmConfig {
  static constexpr int MR = kOnHost ? 8 : 4;
  static constexpr int NR = kOnHost ? 16 : 4;
  static constexpr int kMaxTM = kOnHost ? 32 : 64;
  static constexpr int kMaxTN = kOnHost ? 512 : 128;
  static constexpr int kArea = kOnHost ? 4096 : 4096;  // TM * TN when M allows
  static constexpr int TK = kOnHost ? 128 : 16;
};

// From this many K slices on, a GPU sums each output's slices with a team (run_gemm).
constexpr int kTeamSplitSum = 64;

// How one GEMM is cut into tiles and K slices (see plan_gemm in gemm.cpp).
struct GemmPlan {
  int M = 0, N = 0, K = 0;
  int TM = 0, TN = 0, TK = 0;
  int tm_shift = 0, tn_shift = 0;  // TM = 1 << tm_shift, TN = 1 << tn_shift
  int tiles_m = 0, tiles_n = 0, splits = 1, k_per_split = 0;
  int team_size = 1;
  size_t partial_floats() const { return splits > 1 ? size_t(splits) * M * N : 0; }
};
GemmPlan plan_gemm(int M, int N, int K);

// dst[j] = src[idx[j]], j < n: a CPU thread's staging loop. The buffers never overlap; saying so
// lets the compiler use vector gathers.
KOKKOS_INLINE_FUNCTION void gather_row(float* KOKKOS_RESTRICT dst, const float* KOKKOS_RESTRICT src,
                                       const int* KOKKOS_RESTRICT idx, int n) {
  for (int j = 0; j < n; ++j) dst[j] = src[idx[j]];
}

// dst[j] = src[j], j < n (a run of consecutive elements). Runs are short (an image row), so a CPU
// copies them as two overlapping blocks of a power of two instead of calling memcpy, which
// compilers substitute for any copy loop and which costs more than the copy at these sizes.
template <int B>
KOKKOS_INLINE_FUNCTION void copy_block(float* dst, const float* src) {
  float v[B];
  __builtin_memcpy(v, src, sizeof v);
  __builtin_memcpy(dst, v, sizeof v);
}

KOKKOS_INLINE_FUNCTION void copy_row(float* KOKKOS_RESTRICT dst, const float* KOKKOS_RESTRICT src,
                                     int n) {
  if (kOnHost) {
    if (n > 32) {
      __builtin_memcpy(dst, src, size_t(n) * sizeof(float));
    } else if (n >= 16) {
      copy_block<16>(dst, src);
      copy_block<16>(dst + n - 16, src + n - 16);
    } else if (n >= 8) {
      copy_block<8>(dst, src);
      copy_block<8>(dst + n - 8, src + n - 8);
    } else if (n >= 4) {
      copy_block<4>(dst, src);
      copy_block<4>(dst + n - 4, src + n - 4);
    } else {
      for (int j = 0; j < n; ++j) dst[j] = src[j];
    }
    return;
  }
  for (int j = 0; j < n; ++j) dst[j] = src[j];
}

// One thread's register block: C (rows,NR) += sum over k < kv of A(k,i) B(k,j), with
// A(k,i) = A[k*lda + i], B(k,j) = B[k*ldb + j], C(i,j) = C[i*ldc + j] (staged tiles, k-major);
// rows <= MR (and C overwritten, not read, when `first`: CPU only). A CPU build spells the rows as SIMD registers (host_simd.hpp): one load of B and a
// broadcast multiply-add per row and k, which compilers do not reliably find on their own, and
// computes only the rows that hold data (M = 6 filters in a block of 8 would waste a quarter).
// Blocks that do not fit the register file (AVX2: 8x16 is 16 accumulators of 16) run in passes.
// (Host compilers only: device code takes the plain loops over all MR rows.)
#if !defined(__CUDACC__)
// Rows per pass: mr accumulator rows of nv registers, plus the B row and one broadcast.
constexpr int micro_rows_per_pass(int mr, int nv) {
  return mr * nv + nv + 1 <= simd::kRegisters || mr == 1 ? mr : micro_rows_per_pass(mr / 2, nv);
}

// ROWS rows in registers, one pass over k.
template <int ROWS>
inline void micro_block(const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                        int kv, bool first) {
  using simd::Vec;
  constexpr int L = simd::kLanes, NV = GemmConfig::NR / L;
  Vec acc[ROWS][NV];
#pragma GCC unroll 16
  for (int ii = 0; ii < ROWS; ++ii)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) acc[ii][v] = first ? Vec{} : simd::load(C + ii * ldc + v * L);
  for (int k = 0; k < kv; ++k) {
    Vec b[NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) b[v] = simd::load(B + k * ldb + v * L);
#pragma GCC unroll 16
    for (int ii = 0; ii < ROWS; ++ii) {
      const float a = A[k * lda + ii];  // a scalar operand is broadcast
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) acc[ii][v] += a * b[v];
    }
  }
#pragma GCC unroll 16
  for (int ii = 0; ii < ROWS; ++ii)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) simd::store(C + ii * ldc + v * L, acc[ii][v]);
}

// ROWS rows in as few passes as the registers allow.
template <int ROWS>
inline void micro_rows(const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                       int kv, bool first) {
  constexpr int MH = micro_rows_per_pass(ROWS, GemmConfig::NR / simd::kLanes);
  micro_block<MH>(A, lda, B, ldb, C, ldc, kv, first);
  if constexpr (ROWS > MH)
    micro_rows<ROWS - MH>(A + MH, lda, B, ldb, C + MH * ldc, ldc, kv, first);
}

template <int... R>
inline void micro_rows_of(int rows, const float* A, int lda, const float* B, int ldb, float* C,
                          int ldc, int kv, bool first, std::integer_sequence<int, R...>) {
  // rows in 1..MR: the one instantiation for it
  (void)((rows == R + 1 ? (micro_rows<R + 1>(A, lda, B, ldb, C, ldc, kv, first), true) : false) ||
         ...);
}
#endif

// first (CPU): C is not read but overwritten (the first K slice: no zeroed tile needed).
KOKKOS_INLINE_FUNCTION void micro_tile(const float* A, int lda, const float* B, int ldb, float* C,
                                       int ldc, int kv, int rows, bool first = false) {
  constexpr int MR = GemmConfig::MR, NR = GemmConfig::NR;
#if !defined(__CUDACC__)
  if constexpr (kOnHost && NR % simd::kLanes == 0) {
    micro_rows_of(rows, A, lda, B, ldb, C, ldc, kv, first, std::make_integer_sequence<int, MR>{});
    return;
  }
#endif
  (void)rows;
  (void)first;
  float acc[MR][NR];
  for (int ii = 0; ii < MR; ++ii)
    for (int jj = 0; jj < NR; ++jj) acc[ii][jj] = C[ii * ldc + jj];
  for (int k = 0; k < kv; ++k) {
    // A local copy of the B row lets the compiler keep acc in vector registers.
    float bk[NR];
    for (int jj = 0; jj < NR; ++jj) bk[jj] = B[k * ldb + jj];
    for (int ii = 0; ii < MR; ++ii) {
      const float av = A[k * lda + ii];
      for (int jj = 0; jj < NR; ++jj) acc[ii][jj] += av * bk[jj];
    }
  }
  for (int ii = 0; ii < MR; ++ii)
    for (int jj = 0; jj < NR; ++jj) C[ii * ldc + jj] = acc[ii][jj];
}

template <class OpA, class OpB, class OutCols, class Epilogue>
struct TiledGemmKernel {
  static constexpr int MR = GemmConfig::MR, NR = GemmConfig::NR;
  GemmPlan g;
  OpA a;
  OpB b;
  GemmOutput<OutCols> out;
  Epilogue epi;
  float* partial;  // (splits, M, N) when g.splits > 1

  static size_t scratch_bytes(const GemmPlan& g) {
    return ScratchView<float>::shmem_size(size_t(g.TK) * g.TM) +
           ScratchView<float>::shmem_size(size_t(g.TK) * g.TN) +
           ScratchView<float>::shmem_size(size_t(g.TM) * g.TN) +
           ScratchView<int>::shmem_size(g.TM) + 2 * ScratchView<int>::shmem_size(g.TK) +
           4 * ScratchView<int>::shmem_size(g.TN + 1);
  }

  // One team: output tile (tile_m, tile_n) over the K range of slice `split`.
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    int t = team.league_rank();
    const int split = t % g.splits;
    t /= g.splits;
    const int i0 = (t / g.tiles_n) * g.TM, j0 = (t % g.tiles_n) * g.TN;
    const int k_begin = split * g.k_per_split, k_end = imin(g.K, k_begin + g.k_per_split);
    const int mv = imin(g.TM, g.M - i0), nv = imin(g.TN, g.N - j0);
    const int TM = g.TM, TN = g.TN, tm_shift = g.tm_shift, tn_shift = g.tn_shift;

    ScratchView<float> as(team.team_scratch(0), size_t(g.TK) * TM);  // as(k*TM + i)
    ScratchView<float> bs(team.team_scratch(0), size_t(g.TK) * TN);  // bs(k*TN + j)
    ScratchView<float> cs(team.team_scratch(0), size_t(TM) * TN);    // cs(i*TN + j)
    ScratchView<int> a_rows(team.team_scratch(0), TM);
    ScratchView<int> a_cols(team.team_scratch(0), g.TK), b_rows(team.team_scratch(0), g.TK);
    ScratchView<int> b_cols(team.team_scratch(0), TN + 1), out_cols(team.team_scratch(0), TN + 1);
    ScratchView<int> runs(team.team_scratch(0), TN + 1);      // CPU: runs of b_cols
    ScratchView<int> out_runs(team.team_scratch(0), TN + 1);  // CPU: runs of out_cols

    // Offsets of the tile's rows and columns are decoded once, those of K once per slice.
    // Staged rows and columns past the matrix stay zero, so micro-tiles need no bounds.
    if constexpr (kOnHost) {
      a.rows.fill(i0, mv, a_rows.data());
      b.cols.fill(j0, nv, b_cols.data());
      out.cols.fill(j0, nv, out_cols.data());
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, mv),
                           [&](int i) { a_rows(i) = a.rows(i0 + i); });
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nv), [&](int j) {
        b_cols(j) = b.cols(j0 + j);
        out_cols(j) = out.cols(j0 + j);
      });
    }
    // A CPU's first K slice overwrites the tile (micro_tile's `first`), so it needs no zeroing
    // unless there is no slice at all.
    if (!kOnHost || k_begin >= k_end)
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TM * TN), [&](int e) { cs(e) = 0.f; });
    if (mv < TM)
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, g.TK * TM), [&](int e) {
        if ((e & (TM - 1)) >= mv) as(e) = 0.f;
      });
    if (nv < TN)
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, g.TK * TN), [&](int e) {
        if ((e & (TN - 1)) >= nv) bs(e) = 0.f;
      });
    // A CPU copies runs of consecutive elements (image rows of a convolution, whole rows of a
    // plain matrix) into and out of the tile instead of moving one element at a time.
    const int nruns = kOnHost ? find_runs(b_cols.data(), nv, runs.data()) : 0;
    const int nout_runs = kOnHost ? find_runs(out_cols.data(), nv, out_runs.data()) : 0;

    for (int k0 = k_begin; k0 < k_end; k0 += g.TK) {
      const int kv = imin(g.TK, k_end - k0);
      team.team_barrier();  // the previous slice's micro-tiles are done with the staged tiles
      if constexpr (kOnHost) {
        a.cols.fill(k0, kv, a_cols.data());
        b.rows.fill(k0, kv, b_rows.data());
      } else {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kv), [&](int k) {
          a_cols(k) = a.cols(k0 + k);
          b_rows(k) = b.rows(k0 + k);
        });
      }
      team.team_barrier();
      if constexpr (kOnHost) {
        for (int k = 0; k < kv; ++k) gather_row(as.data() + k * TM, a.p + a_cols(k), a_rows.data(), mv);
        if (nruns * 8 <= nv) {  // runs of 8 or more on average: copy them
          for (int k = 0; k < kv; ++k) {
            const float* src = b.p + b_rows(k);
            float* dst = bs.data() + k * TN;
            for (int r = 0; r < nruns; ++r)
              copy_row(dst + runs(r), src + b_cols(runs(r)), runs(r + 1) - runs(r));
          }
        } else {  // short runs: one (vectorised) gather per row is cheaper
          for (int k = 0; k < kv; ++k)
            gather_row(bs.data() + k * TN, b.p + b_rows(k), b_cols.data(), nv);
        }
      } else {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kv << tm_shift), [&](int e) {
          const int k = e >> tm_shift, i = e & (TM - 1);
          if (i < mv) as(e) = a.p[a_rows(i) + a_cols(k)];
        });
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kv << tn_shift), [&](int e) {
          const int k = e >> tn_shift, j = e & (TN - 1);
          if (j < nv) bs(e) = b.p[b_rows(k) + b_cols(j)];
        });
      }
      team.team_barrier();
      const int blocks_n = TN / NR;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (TM / MR) * blocks_n), [&](int u) {
        const int mi = (u / blocks_n) * MR, ni = (u % blocks_n) * NR;
        if (mi < mv && ni < nv)
          micro_tile(as.data() + mi, TM, bs.data() + ni, TN, cs.data() + mi * TN + ni, TN, kv,
                     imin(MR, mv - mi), k0 == k_begin);
      });
    }
    team.team_barrier();

    if constexpr (kOnHost) {
      for (int i = 0; i < mv; ++i) {
        float* row = cs.data() + i * TN;
        if (partial) {
          copy_row(partial + (size_t(split) * g.M + i0 + i) * g.N + j0, row, nv);
          continue;
        }
        float* dst = out.p + size_t(i0 + i) * out.row_stride;
        epi.apply_row(row, nv, i0 + i, j0, dst, out_cols.data());
        for (int r = 0; r < nout_runs; ++r)
          copy_row(dst + out_cols(out_runs(r)), row + out_runs(r), out_runs(r + 1) - out_runs(r));
      }
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, mv << tn_shift), [&](int e) {
        const int i = e >> tn_shift, j = e & (TN - 1);
        if (j >= nv) return;
        if (partial) {
          partial[(size_t(split) * g.M + i0 + i) * g.N + j0 + j] = cs(e);
        } else {
          float* c = out.p + size_t(i0 + i) * out.row_stride + out_cols(j);
          *c = epi.apply(cs(e), i0 + i, j0 + j, c);
        }
      });
    }
  }
};

// Runs a planned GEMM. partial: plan.partial_floats() floats of device scratch (or nullptr when
// the plan has a single K slice).
template <class OpA, class OpB, class OutCols, class Epilogue>
void run_gemm(const std::string& label, const GemmPlan& g, const OpA& a, const OpB& b,
              const GemmOutput<OutCols>& out, const Epilogue& epi, float* partial) {
  if (g.M <= 0 || g.N <= 0) return;
  using Kernel = TiledGemmKernel<OpA, OpB, OutCols, Epilogue>;
  const Kernel kernel{g, a, b, out, epi, g.splits > 1 ? partial : nullptr};
  TeamPolicy policy = team_policy(g.tiles_m * g.tiles_n * g.splits, g.team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(Kernel::scratch_bytes(g)));
  Kokkos::parallel_for(label + "[tiled]", policy, kernel);
  if (g.splits <= 1) return;

  // C(i, j) = epilogue(sum of the slices' partial sums, in slice order).
  const int M = g.M, N = g.N, splits = g.splits;
  const GemmOutput<OutCols> o = out;
  const Epilogue e = epi;
  if (!kOnHost && splits >= kTeamSplitSum) {
    // Many slices onto few outputs (a first layer's weight gradient on a GPU): a thread looping
    // over hundreds of slices is latency-bound, so a team sums each output, in a fixed tree order.
    // Wide teams for thousands of slices: at 32 threads LeNet-5's first layer (150 outputs, 4096
    // slices) ran one warp per SM, 35 us of a 950 us step at batch 1024 on the H200.
    const int team_size = splits >= 1024 ? 256 : 64;
    Kokkos::parallel_for(label + "[split_sum]", team_policy(M * N, team_size),
                         KOKKOS_LAMBDA(const Member& team) {
      const size_t idx = size_t(team.league_rank());
      float acc = 0.f;
      Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, splits), [&](int s, float& sum) {
        sum += partial[size_t(s) * M * N + idx];
      }, acc);
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        const int i = int(idx / N), j = int(idx % N);
        float* c = o.p + size_t(i) * o.row_stride + o.cols(j);
        *c = e.apply(acc, i, j, c);
      });
    });
    return;
  }
  Kokkos::parallel_for(label + "[split_sum]", range(size_t(M) * N), KOKKOS_LAMBDA(size_t idx) {
    const int i = int(idx / N), j = int(idx % N);
    float acc = 0.f;
    for (int s = 0; s < splits; ++s) acc += partial[size_t(s) * M * N + idx];
    float* c = o.p + size_t(i) * o.row_stride + o.cols(j);
    *c = e.apply(acc, i, j, c);
  });
}

}  // namespace kk
}  // namespace pcnn
