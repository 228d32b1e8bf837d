// The packed GEMM core shared by the matrix GEMM (gemm_block.cpp) and the implicit-im2col
// convolution GEMMs (conv_gemm.cpp); internal to the openmp backend. op(A) is packed into
// MR-row panels and B into NR-column panels, both k-major; a micro-kernel keeps an MR x NR block
// of C in registers for a whole k block, so each value loaded feeds several FMAs. Where B comes
// from (a matrix, or an image read through im2col offsets) and where a finished tile of C goes
// are template policies, so convolutions need not materialise their im2col matrix.
#pragma once

#include <algorithm>
#include <cstddef>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "backends/openmp/gemm_block.hpp"
#include "backends/openmp/offset_runs.hpp"

namespace pcnn::omp::kernel {

constexpr int MR = kGemmMR, NR = kGemmNR;
// KC x NR floats of B (16 KiB) stay in L1 across the M panels; MC x KC of A (96 KiB) in L2.
constexpr int KC = 256, MC = 96, NC = 1024;

// One SIMD register of floats (GCC/Clang vector extension: portable, no intrinsics): eight with
// AVX, four with plain SSE builds.
#if defined(__AVX__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
typedef float vfloat __attribute__((vector_size(kLanes * sizeof(float))));
constexpr int NV = NR / kLanes;
static_assert(NR % kLanes == 0, "NR must be a whole number of registers");

inline vfloat load_vec(const float* p) {
  vfloat v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

inline int round_up(int v, int m) { return (v + m - 1) / m * m; }

// ---- B sources: pack(k0, kc, j0, nc, out) writes B[k0.., j0..] (kc x nc) as NR-column panels,
// panel jp at out + jp*kc, row k of it at + k*NR, missing columns zero.

// op(B) of a row-major matrix (B stored (N,K) when trans).
struct MatrixB {
  bool trans;
  const float* B;
  int ldb;
  void pack(int k0, int kc, int j0, int nc, float* out) const {
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
        // Walk each stored row contiguously and scatter it into the panel (which sits in L1).
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
};

// Runs of consecutive offsets worth masked loads; chunks with more use scalar loads.
constexpr int kMaxRuns = 8;
#if defined(__AVX512F__)
static_assert(NR == 16, "the masked-load paths fill one 16-lane register per panel row");
#endif

// B(k, j) = x[koff[k] + joff[j]]: an im2col matrix (or its transpose) read straight from the
// image, never stored. runs describes joff per NR chunk (chunks start at multiples of NR).
struct OffsetB {
  const float* x;
  const int* koff;
  const int* joff;
  const ChunkRuns* runs;
#if defined(__AVX512F__)
  // Panel rows k0..k0+kc of one chunk from its runs; RUNS == 0: run.count runs, not unrolled.
  template <int RUNS>
  void fill_panel(const ChunkRuns& run, int kc, int k0, float* panel) const {
    const int count = RUNS ? RUNS : run.count;
    for (int k = 0; k < kc; ++k) {
      const float* row = x + koff[k0 + k];
      __m512 v = _mm512_maskz_loadu_ps(__mmask16(run.mask[0]), row + run.start[0]);
      for (int r = 1; r < count; ++r)
        v = _mm512_mask_loadu_ps(v, __mmask16(run.mask[r]), row + run.start[r]);
      _mm512_storeu_ps(panel + size_t(k) * NR, v);
    }
  }
#endif
  void pack(int k0, int kc, int j0, int nc, float* out) const {
    for (int jp = 0; jp < nc; jp += NR) {
      const int cols = std::min(NR, nc - jp);
      float* panel = out + size_t(jp) * kc;
#if defined(__AVX512F__)
      const ChunkRuns& run = runs[(j0 + jp) / NR];
      if (run.count <= kMaxRuns) {
        // The usual run counts get a loop of their own, unrolled, with the runs in registers.
        switch (run.count) {
          case 1: fill_panel<1>(run, kc, k0, panel); break;
          case 2: fill_panel<2>(run, kc, k0, panel); break;
          case 3: fill_panel<3>(run, kc, k0, panel); break;
          case 4: fill_panel<4>(run, kc, k0, panel); break;
          default: fill_panel<0>(run, kc, k0, panel); break;
        }
        continue;
      }
#endif
      int idx[NR];
      for (int j = 0; j < NR; ++j) idx[j] = j < cols ? joff[j0 + jp + j] : 0;
      for (int k = 0; k < kc; ++k) {
        const float* row = x + koff[k0 + k];
        float* dst = panel + size_t(k) * NR;
        for (int j = 0; j < NR; ++j) dst[j] = j < cols ? row[idx[j]] : 0.f;
      }
    }
  }
};

// ---- C sinks: store<ROWS>(acc, i, j, cols, beta) receives the finished ROWS x NR tile whose
// top-left is C(i, j); only its first cols columns are real.

// C = acc + beta C (beta == 0 overwrites, ignoring what was there).
struct MatrixC {
  float* C;
  int ldc;
  template <int ROWS>
  void store(const vfloat (&acc)[ROWS][NV], int i, int j, int cols, float beta) const {
    for (int r = 0; r < ROWS; ++r) {
      float* c = C + size_t(i + r) * ldc + j;
      if (beta == 0.f && cols == NR) {
        for (int v = 0; v < NV; ++v) __builtin_memcpy(c + kLanes * v, &acc[r][v], sizeof(vfloat));
        continue;
      }
      float out[NR];
      __builtin_memcpy(out, acc[r], sizeof out);
      if (beta == 0.f) {
        for (int q = 0; q < cols; ++q) c[q] = out[q];
      } else if (beta == 1.f) {
        for (int q = 0; q < cols; ++q) c[q] += out[q];
      } else {
        for (int q = 0; q < cols; ++q) c[q] = beta * c[q] + out[q];
      }
    }
  }
};

// a: kc x MR panel, b: kc x NR panel -> the ROWS x NR tile a b, handed to the sink. ROWS is a
// template argument so that a ragged last panel costs no padded multiply-adds.
template <int ROWS, class Sink>
inline void micro_kernel(int kc, const float* __restrict a, const float* __restrict b,
                         const Sink& sink, int i, int j, int cols, float beta) {
  vfloat acc[ROWS][NV] = {};
  for (int k = 0; k < kc; ++k) {
    vfloat bk[NV];
    for (int v = 0; v < NV; ++v) bk[v] = load_vec(b + size_t(k) * NR + kLanes * v);
    const float* ak = a + size_t(k) * MR;
    for (int r = 0; r < ROWS; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] += ak[r] * bk[v];
  }
  sink.template store<ROWS>(acc, i, j, cols, beta);
}

template <class Sink>
inline void micro_dispatch(int rows, int kc, const float* a, const float* b, const Sink& sink,
                           int i, int j, int cols, float beta) {
  static_assert(MR == 6, "micro_dispatch lists one case per row count up to MR");
  switch (rows) {
    case 6: micro_kernel<6>(kc, a, b, sink, i, j, cols, beta); break;
    case 5: micro_kernel<5>(kc, a, b, sink, i, j, cols, beta); break;
    case 4: micro_kernel<4>(kc, a, b, sink, i, j, cols, beta); break;
    case 3: micro_kernel<3>(kc, a, b, sink, i, j, cols, beta); break;
    case 2: micro_kernel<2>(kc, a, b, sink, i, j, cols, beta); break;
    default: micro_kernel<1>(kc, a, b, sink, i, j, cols, beta); break;
  }
}

// op(A)[i0.., k0..] (mc x kc) -> MR-row panels, alpha folded in, missing rows zero.
inline void pack_a(bool trans, const float* A, int lda, int i0, int mc, int k0, int kc,
                   float alpha, float* out) {
  for (int ip = 0; ip < mc; ip += MR) {
    const int rows = std::min(MR, mc - ip);
    float* panel = out + size_t(ip) * kc;
    if (!trans) {
      for (int r = 0; r < rows; ++r) {
        const float* src = A + size_t(i0 + ip + r) * lda + k0;
        for (int k = 0; k < kc; ++k) panel[size_t(k) * MR + r] = alpha * src[k];
      }
    } else {
      for (int k = 0; k < kc; ++k) {
        const float* src = A + size_t(k0 + k) * lda + (i0 + ip);
        for (int r = 0; r < rows; ++r) panel[size_t(k) * MR + r] = alpha * src[r];
      }
    }
    for (int r = rows; r < MR; ++r)
      for (int k = 0; k < kc; ++k) panel[size_t(k) * MR + r] = 0.f;
  }
}

// C(M,N) = alpha op(A)(M,K) B(K,N) + beta C, with B read through src and C written through sink.
// Each C element is summed in k order, k blocks of KC in turn, whatever M, N block it is in.
template <class Source, class Sink>
void gemm_core(bool trans_a, int M, int N, int K, float alpha, const float* A, int lda,
               const Source& src, float beta, const Sink& sink, GemmPack& pack) {
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
      src.pack(k0, kc, j0, nc, pack.b.data());
      for (int i0 = 0; i0 < M; i0 += MC) {
        const int mc = std::min(MC, M - i0);
        pack_a(trans_a, A, lda, i0, mc, k0, kc, alpha, pack.a.data());
        for (int jp = 0; jp < nc; jp += NR) {
          const float* bp = pack.b.data() + size_t(jp) * kc;
          const int cols = std::min(NR, nc - jp);
          for (int ip = 0; ip < mc; ip += MR) {
            const float* ap = pack.a.data() + size_t(ip) * kc;
            micro_dispatch(std::min(MR, mc - ip), kc, ap, bp, sink, i0 + ip, j0 + jp, cols,
                           beta_k);
          }
        }
      }
    }
  }
}

}  // namespace pcnn::omp::kernel
