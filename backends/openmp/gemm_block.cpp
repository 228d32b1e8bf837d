// Single-thread packed GEMM (see gemm_block.hpp). op(A) is packed into kGemmMR-row panels and
// op(B) into kGemmNR-column panels, both k-major, which absorbs the transposes; a micro-kernel
// keeps an MR x NR block of C in registers over a whole k block, so each loaded value feeds
// several FMAs (the serial GEMM loads and stores C for every multiply-add instead).
#include "backends/openmp/gemm_block.hpp"

#include <algorithm>
#include <cstddef>

namespace pcnn::omp {

namespace {

constexpr int MR = kGemmMR, NR = kGemmNR;
// KC x NR floats of B (16 KiB) stay in L1 across the M panels; MC x KC of A (96 KiB) in L2.
constexpr int KC = 256, MC = 96, NC = 1024;

// Eight floats in one AVX register (GCC/Clang vector extension: portable, no intrinsics).
typedef float vf8 __attribute__((vector_size(32)));
constexpr int NV = NR / 8;

inline vf8 load8(const float* p) {
  vf8 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

// a: kc x MR (k-major panel), b: kc x NR -> C block (ROWS x cols) = a b + beta C.
// ROWS is a template argument so the ragged last panel costs no padded multiply-adds.
template <int ROWS>
void micro_kernel(int kc, const float* __restrict a, const float* __restrict b, int cols,
                  float beta, float* c, size_t ldc) {
  vf8 acc[ROWS][NV] = {};
  for (int k = 0; k < kc; ++k) {
    vf8 bk[NV];
    for (int v = 0; v < NV; ++v) bk[v] = load8(b + size_t(k) * NR + 8 * v);
    const float* ak = a + size_t(k) * MR;
    for (int i = 0; i < ROWS; ++i)
      for (int v = 0; v < NV; ++v) acc[i][v] += ak[i] * bk[v];
  }
  for (int i = 0; i < ROWS; ++i) {
    float out[NR];
    __builtin_memcpy(out, acc[i], sizeof out);
    float* ci = c + i * ldc;
    if (beta == 0.f) {
      for (int j = 0; j < cols; ++j) ci[j] = out[j];
    } else if (beta == 1.f) {
      for (int j = 0; j < cols; ++j) ci[j] += out[j];
    } else {
      for (int j = 0; j < cols; ++j) ci[j] = beta * ci[j] + out[j];
    }
  }
}

void micro_dispatch(int rows, int kc, const float* a, const float* b, int cols, float beta,
                    float* c, size_t ldc) {
  switch (rows) {
    case 6: micro_kernel<6>(kc, a, b, cols, beta, c, ldc); break;
    case 5: micro_kernel<5>(kc, a, b, cols, beta, c, ldc); break;
    case 4: micro_kernel<4>(kc, a, b, cols, beta, c, ldc); break;
    case 3: micro_kernel<3>(kc, a, b, cols, beta, c, ldc); break;
    case 2: micro_kernel<2>(kc, a, b, cols, beta, c, ldc); break;
    default: micro_kernel<1>(kc, a, b, cols, beta, c, ldc); break;
  }
}
static_assert(MR == 6, "micro_dispatch lists one case per row count up to MR");

// op(A)[i0.., k0..] (mc x kc) -> MR-row panels, alpha folded in, missing rows zero.
void pack_a(bool trans, const float* A, int lda, int i0, int mc, int k0, int kc, float alpha,
            float* out) {
  for (int ip = 0; ip < mc; ip += MR) {
    const int rows = std::min(MR, mc - ip);
    float* panel = out + size_t(ip) * kc;
    for (int k = 0; k < kc; ++k) {
      float* dst = panel + size_t(k) * MR;
      for (int i = 0; i < rows; ++i) {
        const size_t r = size_t(i0 + ip + i), col = size_t(k0 + k);
        dst[i] = alpha * (trans ? A[col * lda + r] : A[r * lda + col]);
      }
      for (int i = rows; i < MR; ++i) dst[i] = 0.f;
    }
  }
}

// op(B)[k0.., j0..] (kc x nc) -> NR-column panels, missing columns zero.
void pack_b(bool trans, const float* B, int ldb, int k0, int kc, int j0, int nc, float* out) {
  for (int jp = 0; jp < nc; jp += NR) {
    const int cols = std::min(NR, nc - jp);
    float* panel = out + size_t(jp) * kc;
    if (!trans) {
      for (int k = 0; k < kc; ++k) {
        const float* src = B + size_t(k0 + k) * ldb + (j0 + jp);
        float* dst = panel + size_t(k) * NR;
        for (int j = 0; j < cols; ++j) dst[j] = src[j];
        for (int j = cols; j < NR; ++j) dst[j] = 0.f;
      }
    } else {
      // B is stored (N,K): walk each source row contiguously, scatter into the panel (in L1).
      for (int j = 0; j < NR; ++j) {
        if (j < cols) {
          const float* src = B + size_t(j0 + jp + j) * ldb + k0;
          for (int k = 0; k < kc; ++k) panel[size_t(k) * NR + j] = src[k];
        } else {
          for (int k = 0; k < kc; ++k) panel[size_t(k) * NR + j] = 0.f;
        }
      }
    }
  }
}

int round_up(int v, int m) { return (v + m - 1) / m * m; }

}  // namespace

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
  const int kc_max = std::min(K, KC);
  const size_t a_need = size_t(round_up(std::min(M, MC), MR)) * kc_max;
  const size_t b_need = size_t(round_up(std::min(N, NC), NR)) * kc_max;
  if (pack.a.size() < a_need) pack.a.resize(a_need);
  if (pack.b.size() < b_need) pack.b.resize(b_need);

  for (int j0 = 0; j0 < N; j0 += NC) {
    const int nc = std::min(NC, N - j0);
    for (int k0 = 0; k0 < K; k0 += KC) {
      const int kc = std::min(KC, K - k0);
      const float beta_k = k0 == 0 ? beta : 1.f;  // later k blocks add to what the first wrote
      pack_b(trans_b, B, ldb, k0, kc, j0, nc, pack.b.data());
      for (int i0 = 0; i0 < M; i0 += MC) {
        const int mc = std::min(MC, M - i0);
        pack_a(trans_a, A, lda, i0, mc, k0, kc, alpha, pack.a.data());
        for (int jp = 0; jp < nc; jp += NR) {
          const float* bp = pack.b.data() + size_t(jp) * kc;
          const int cols = std::min(NR, nc - jp);
          for (int ip = 0; ip < mc; ip += MR) {
            const float* ap = pack.a.data() + size_t(ip) * kc;
            float* c = C + size_t(i0 + ip) * ldc + (j0 + jp);
            micro_dispatch(std::min(MR, mc - ip), kc, ap, bp, cols, beta_k, c, ldc);
          }
        }
      }
    }
  }
}

}  // namespace pcnn::omp

namespace pcnn::omp {

Slab gemm_share(int tid, int nt, bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
                GemmPack& pack) {
  const int tiles_m = (M + MR - 1) / MR, tiles_n = (N + NR - 1) / NR;
  const bool by_rows = tiles_m >= tiles_n;
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
