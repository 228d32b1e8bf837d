// The one GEMM engine of the kokkos backend: C(M,N) = epilogue(op(A)(M,K) * op(B)(K,N)), one
// team per output tile (and per slice of K when the reduction is long), the A and B tiles staged
// in team scratch, a register micro-tile per thread. A and B are read through "gather" operands,
// so one kernel is a plain GEMM (either transpose) or an implicit-GEMM convolution that never
// materialises im2col. Long reductions are split across teams and summed by a second kernel in a
// fixed order: results are deterministic and no atomics are used.
#pragma once

#include <string>

#include "backends/kokkos/kokkos_common.hpp"
#include "core/activation_math.hpp"

namespace pcnn {
namespace kk {

KOKKOS_INLINE_FUNCTION int imin(int a, int b) { return a < b ? a : b; }

// Where element (row, col) of an operand lives: a row tap plus a column tap. The offsets add up
// to the element's index; h and w add up to a position checked against the operand's H x W
// (outside reads as zero: the convolution's padding).
struct Tap {
  int off, h, w;
};

// i -> i * stride: the rows (or columns) of a plain matrix.
struct StridedMap {
  int stride;
  KOKKOS_INLINE_FUNCTION Tap operator()(int i) const { return {i * stride, 0, 0}; }
};

// j -> (n, i), i < inner: block n starts at n * outer (one image of a batch, one filter).
struct BlockMap {
  int inner, outer;
  KOKKOS_INLINE_FUNCTION Tap operator()(int j) const {
    const int n = j / inner;
    return {n * outer + (j - n * inner), 0, 0};
  }
};

// j -> (n, p, q), output position (p, q) of image n on a P x Q grid, seen from the input: the
// window's corner (h, w) = (p*stride - pad, q*stride - pad), at n*image + h*row + w.
struct PixelMap {
  int P, Q, stride, pad, row, image;
  KOKKOS_INLINE_FUNCTION Tap operator()(int j) const {
    const int n = j / (P * Q), pq = j - n * (P * Q);
    const int p = pq / Q, q = pq - p * Q;
    const int h = p * stride - pad, w = q * stride - pad;
    return {n * image + h * row + w, h, w};
  }
};

// k -> (c, r, s), filter tap (r, s) of channel c: at c*plane + sign*(r*row + s). sign = -1 walks
// the window backwards, as the data gradient does (it reads dy at p = h + pad - r).
struct WindowMap {
  int R, S, row, plane, sign;
  KOKKOS_INLINE_FUNCTION Tap operator()(int k) const {
    const int c = k / (R * S), rs = k - c * (R * S);
    const int r = rs / S, s = rs - r * S;
    return {c * plane + sign * (r * row + s), sign * r, sign * s};
  }
};

// An operand: element (row, col) = p[row tap + col tap] inside H x W, else 0.
template <class RowMap, class ColMap>
struct Gather {
  const float* p;
  int H, W;
  RowMap rows;
  ColMap cols;
  KOKKOS_INLINE_FUNCTION float at(const Tap& r, const Tap& c) const {
    const int h = r.h + c.h, w = r.w + c.w;
    return (unsigned(h) < unsigned(H) && unsigned(w) < unsigned(W)) ? p[r.off + c.off] : 0.f;
  }
};

template <class RowMap, class ColMap>
Gather<RowMap, ColMap> gather(const float* p, int H, int W, RowMap rows, ColMap cols) {
  return {p, H, W, rows, cols};
}

// A row-major matrix with row stride ld, read as op(X) = X^T when trans.
inline Gather<StridedMap, StridedMap> matrix(const float* p, int ld, bool trans) {
  return trans ? gather(p, 1, 1, StridedMap{1}, StridedMap{ld})
               : gather(p, 1, 1, StridedMap{ld}, StridedMap{1});
}

// Where C(i, j) goes: p[i * row_stride + cols(j).off].
template <class ColMap>
struct GemmOutput {
  float* p;
  int row_stride;
  ColMap cols;
};

// C = act(alpha * acc + beta * C + row_bias[i] + col_bias[j]); C is not read when beta == 0.
struct GemmEpilogue {
  float alpha = 1.f, beta = 0.f;
  const float* row_bias = nullptr;
  const float* col_bias = nullptr;
  Activation act = Activation::None;

  KOKKOS_INLINE_FUNCTION float apply(float acc, int i, int j, const float* c) const {
    float v = alpha * acc;
    if (beta != 0.f) v += beta * *c;
    if (row_bias) v += row_bias[i];
    if (col_bias) v += col_bias[j];
    return activate(act, v);
  }
};

// Tile shapes. CPU: one thread per team walks its tile in 4x16 register blocks (the 16 columns
// vectorise), with a deep K slice so the accumulators in scratch are revisited rarely. GPU: 256
// threads per 64x64 tile, 4x4 outputs each, a K slice of 16.
struct GemmConfig {
  static constexpr int MR = 4;
  static constexpr int NR = kOnHost ? 16 : 4;
  static constexpr int kMaxTM = kOnHost ? 32 : 64;
  static constexpr int kMaxTN = kOnHost ? 256 : 128;
  static constexpr int kArea = kOnHost ? 4096 : 4096;  // TM * TN when M allows
  static constexpr int TK = kOnHost ? 128 : 16;
};

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

template <class OpA, class OpB, class OutCols>
struct TiledGemmKernel {
  static constexpr int MR = GemmConfig::MR, NR = GemmConfig::NR;
  GemmPlan g;
  OpA a;
  OpB b;
  GemmOutput<OutCols> out;
  GemmEpilogue epi;
  float* partial;  // (splits, M, N) when g.splits > 1

  static size_t scratch_bytes(const GemmPlan& g) {
    return ScratchView<float>::shmem_size(size_t(g.TK) * g.TM) +
           ScratchView<float>::shmem_size(size_t(g.TK) * g.TN) +
           ScratchView<float>::shmem_size(size_t(g.TM) * g.TN) +
           ScratchView<Tap>::shmem_size(g.TM) + ScratchView<Tap>::shmem_size(g.TN) +
           2 * ScratchView<Tap>::shmem_size(g.TK);
  }

  // One team: output tile (tile_m, tile_n), K range of slice `split`.
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
    ScratchView<Tap> a_rows(team.team_scratch(0), TM), b_cols(team.team_scratch(0), TN);
    ScratchView<Tap> a_cols(team.team_scratch(0), g.TK), b_rows(team.team_scratch(0), g.TK);

    // Taps of the tile's rows and columns are decoded once, those of K once per slice.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, mv),
                         [&](int i) { a_rows(i) = a.rows(i0 + i); });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nv),
                         [&](int j) { b_cols(j) = b.cols(j0 + j); });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TM * TN), [&](int e) { cs(e) = 0.f; });

    for (int k0 = k_begin; k0 < k_end; k0 += g.TK) {
      const int kv = imin(g.TK, k_end - k0);
      team.team_barrier();  // the previous slice's micro-tiles are done with the staged tiles
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kv), [&](int k) {
        a_cols(k) = a.cols(k0 + k);
        b_rows(k) = b.rows(k0 + k);
      });
      team.team_barrier();
      // Rows and columns past the matrix are staged as zeros: micro-tiles need no bounds.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kv << tm_shift), [&](int e) {
        const int k = e >> tm_shift, i = e & (TM - 1);
        as(e) = i < mv ? a.at(a_rows(i), a_cols(k)) : 0.f;
      });
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kv << tn_shift), [&](int e) {
        const int k = e >> tn_shift, j = e & (TN - 1);
        bs(e) = j < nv ? b.at(b_rows(k), b_cols(j)) : 0.f;
      });
      team.team_barrier();
      const int blocks_n = TN / NR;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (TM / MR) * blocks_n), [&](int u) {
        const int mi = (u / blocks_n) * MR, ni = (u % blocks_n) * NR;
        if (mi >= mv || ni >= nv) return;
        const float* A = as.data() + mi;
        const float* B = bs.data() + ni;
        float* C = cs.data() + mi * TN + ni;
        float acc[MR][NR];
        for (int ii = 0; ii < MR; ++ii)
          for (int jj = 0; jj < NR; ++jj) acc[ii][jj] = C[ii * TN + jj];
        for (int k = 0; k < kv; ++k) {
          const float* ak = A + k * TM;
          const float* bk = B + k * TN;
          for (int ii = 0; ii < MR; ++ii) {
            const float av = ak[ii];
            for (int jj = 0; jj < NR; ++jj) acc[ii][jj] += av * bk[jj];
          }
        }
        for (int ii = 0; ii < MR; ++ii)
          for (int jj = 0; jj < NR; ++jj) C[ii * TN + jj] = acc[ii][jj];
      });
    }
    team.team_barrier();

    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, mv << tn_shift), [&](int e) {
      const int i = e >> tn_shift, j = e & (TN - 1);
      if (j >= nv) return;
      if (partial) {
        partial[(size_t(split) * g.M + i0 + i) * g.N + j0 + j] = cs(e);
      } else {
        float* c = out.p + size_t(i0 + i) * out.row_stride + out.cols(j0 + j).off;
        *c = epi.apply(cs(e), i0 + i, j0 + j, c);
      }
    });
  }
};

// Runs a planned GEMM. partial: plan.partial_floats() floats of device scratch (or nullptr when
// the plan has a single K slice).
template <class OpA, class OpB, class OutCols>
void run_gemm(const std::string& label, const GemmPlan& g, const OpA& a, const OpB& b,
              const GemmOutput<OutCols>& out, const GemmEpilogue& epi, float* partial) {
  if (g.M <= 0 || g.N <= 0) return;
  using Kernel = TiledGemmKernel<OpA, OpB, OutCols>;
  const Kernel kernel{g, a, b, out, epi, g.splits > 1 ? partial : nullptr};
  TeamPolicy policy(g.tiles_m * g.tiles_n * g.splits, g.team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(Kernel::scratch_bytes(g)));
  Kokkos::parallel_for(label + "[tiled]", policy, kernel);
  if (g.splits <= 1) return;

  // C(i, j) = epilogue(sum of the slices' partial sums, in slice order).
  const int M = g.M, N = g.N, splits = g.splits;
  const GemmOutput<OutCols> o = out;
  const GemmEpilogue e = epi;
  Kokkos::parallel_for(label + "[split_sum]", range(size_t(M) * N), KOKKOS_LAMBDA(size_t idx) {
    const int i = int(idx / N), j = int(idx % N);
    float acc = 0.f;
    for (int s = 0; s < splits; ++s) acc += partial[size_t(s) * M * N + idx];
    float* c = o.p + size_t(i) * o.row_stride + o.cols(j).off;
    *c = e.apply(acc, i, j, c);
  });
}

}  // namespace kk
}  // namespace pcnn
