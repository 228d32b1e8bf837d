// Kokkos GEMM: tile planning for the shared engine (gemm.hpp), the contract's gemm, and the fully
// connected forward pass with bias and activation in the GEMM's epilogue.
#include "backends/kokkos/gemm.hpp"

#include <algorithm>

#include "backends/kokkos/kokkos_backend.hpp"

namespace pcnn {

namespace kk {

namespace {
int pow2_at_least(int n) {
  int p = 1;
  while (p < n) p <<= 1;
  return p;
}
int log2_exact(int p) {
  int s = 0;
  while ((1 << s) < p) ++s;
  return s;
}
}  // namespace

GemmPlan plan_gemm(int M, int N, int K) {
  using C = GemmConfig;
  GemmPlan g;
  g.M = M;
  g.N = N;
  g.K = K;
  g.TK = C::TK;
  // Small M (few output channels) gets a short, wide tile so the team still has work.
  g.TM = std::min(std::max(pow2_at_least(M), C::MR), C::kMaxTM);
  g.TN = std::min(std::max(pow2_at_least(N), C::NR), std::max(C::NR, std::min(C::kMaxTN,
                                                                           C::kArea / g.TM)));
  g.k_per_split = K;
  const int concurrency = ExecSpace().concurrency();
  // A CPU whose threads outnumber the tiles and the K slices together (a dense layer at a small
  // batch on 16 threads: 64 x 120 x 400 was two 32 x 128 tiles, too short a K to split, 2 of 16
  // threads busy) takes narrower, then shorter tiles, down to one register block.
  if (kOnHost) {
    const int max_slices = std::max(1, K / (2 * g.TK));
    const auto tiles = [&] { return ((M + g.TM - 1) / g.TM) * ((N + g.TN - 1) / g.TN); };
    while (tiles() * max_slices < concurrency && (g.TN > C::NR || g.TM > C::MR)) {
      if (g.TN > C::NR && (g.TN >= 2 * g.TM || g.TM == C::MR)) g.TN /= 2;
      else g.TM /= 2;
    }
  }
  g.tm_shift = log2_exact(g.TM);
  g.tn_shift = log2_exact(g.TN);
  g.tiles_m = (M + g.TM - 1) / g.TM;
  g.tiles_n = (N + g.TN - 1) / g.TN;

  // Too few tiles to keep every core (or SM) busy: split K into slices of at least two K steps.
  // The split count depends only on the shape and the machine, so a run is reproducible.
  // GPU: one team per 256 resident threads; a product of only a few tiles (their teams may be
  // one warp each) gets four times as many, so that its slices fill every SM.
  const int tiles_now = std::max(1, g.tiles_m * g.tiles_n);
  const int teams_wanted =
      kOnHost ? 4 * concurrency : std::max(1, concurrency / (tiles_now <= 4 ? 64 : 256));
  // The split sum reads every slice once per output. On a GPU a long reduction onto few outputs
  // (a first layer's weight gradient: 6 x 25 outputs over N*28*28) wants many more slices than
  // a CPU: 64 left that kernel at 3.1 ms of LeNet-5's 4.7 ms step at batch 1024 (H200). Their
  // sum is a team per output there (run_gemm), so many slices cost little.
  const int max_splits = kOnHost ? 64 : 4096;
  const int tiles = std::max(1, g.tiles_m * g.tiles_n);
  if (tiles < teams_wanted && K >= 4 * g.TK) {
    int splits = std::min({(teams_wanted + tiles - 1) / tiles, K / (2 * g.TK), max_splits});
    while (splits > 1 && double(splits) * M * N > double(1 << 22)) splits /= 2;  // 16 MB of partials
    g.k_per_split = ((K + splits - 1) / splits + g.TK - 1) / g.TK * g.TK;
    g.splits = (K + g.k_per_split - 1) / g.k_per_split;
  }

  if (!kOnHost) {
    const int blocks = (g.TM / C::MR) * (g.TN / C::NR);
    g.team_size = std::min(256, (blocks + 31) / 32 * 32);
  }
  return g;
}

}  // namespace kk

// C (M,N), row stride ldc = epi(op(A) op(B)) for row-major A and B: one planned run of the
// shared engine, its split-K partial sums in the kPartials slot.
template <class Epilogue>
void KokkosBackend::matrix_gemm(const char* label, bool trans_a, bool trans_b, int M, int N, int K,
                                const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                                const Epilogue& epi) {
  using namespace kk;
  const GemmPlan g = plan_gemm(M, N, K);
  run_gemm(label, g, matrix(A, lda, trans_a), matrix(B, ldb, trans_b),
           GemmOutput<StridedMap>{C, ldc, StridedMap{1}}, epi,
           workspace(kPartials, g.partial_floats()));
}

// C(M,N) = alpha op(A)(M,K) op(B)(K,N) + beta C; row-major, lda/ldb/ldc row strides
void KokkosBackend::gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                         const float* A, int lda, const float* B, int ldb, float beta, float* C,
                         int ldc) {
  PCNN_KK_REGION(gemm);
  kk::GemmEpilogue<> epi;
  epi.alpha = alpha;
  epi.beta = beta;
  // alpha == 0 must not read A or B (they may hold anything): plan an empty reduction.
  matrix_gemm("pcnn::gemm", trans_a, trans_b, M, N, alpha == 0.f ? 0 : K, A, lda, B, ldb, C, ldc,
              epi);
}

// x (N,in), w (out,in), b (out) -> y (N,out) = act(x w^T + b)
void KokkosBackend::linear_forward(int N, int in, int out, Activation act, const float* x,
                                   const float* w, const float* b, float* y) {
  PCNN_KK_REGION(linear_forward);
  dispatch_activation(act, [&](auto tag) {
    kk::GemmEpilogue<decltype(tag)::value> epi;
    epi.col_bias = b;
    matrix_gemm("pcnn::linear_forward", false, true, N, out, in, x, in, w, in, y, out, epi);
  });
}

}  // namespace pcnn
