// fp32 dense ops of the cuda backend: GEMM and the fused linear layer. Every product goes through
// gemm_tile.cuh (gemm_run.cuh launches it); the "problems" below and in gemm_linear.cuh only say
// how operands are read and results written, which is where the fusing lives. Their 16-bit form:
// linear_16.cu; the convolutions' implicit GEMMs: conv2d_gemm.cu (each file a module of its own,
// loaded only by the runs that use it).
#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/gemm.cuh"
#include "backends/cuda/gemm_linear.cuh"
#include "backends/cuda/gemm_run.cuh"
#include "backends/cuda/launch.cuh"
#include "core/activation_math.hpp"

namespace pcnn {

namespace cuda {

namespace {

// C(M,N) = alpha op(A) op(B) + beta C, op chosen at compile time
template <bool TA, bool TB>
struct GemmProblem {
  int M, N, K;
  const float* A;
  int lda;
  const float* B;
  int ldb;
  float alpha, beta;
  float* C;
  int ldc;
  static constexpr bool kAContigK = !TA;  // A (M,K) row-major: k runs along memory
  static constexpr bool kBContigJ = !TB;  // B (K,N) row-major: j runs along memory
  __device__ float a(int i, int k) const {
    return TA ? A[size_t(k) * lda + i] : A[size_t(i) * lda + k];
  }
  __device__ float b(int k, int j) const {
    return TB ? B[size_t(j) * ldb + k] : B[size_t(k) * ldb + j];
  }
  __device__ void store(int i, int j, float acc) const {
    float* c = C + size_t(i) * ldc + j;
    *c = beta == 0.f ? alpha * acc : alpha * acc + beta * *c;  // beta 0: NaNs in C ignored
  }
};

// C (M,N) = alpha op(A) op(B) + beta C; one thread per output, no reuse (the lab's baseline)
template <bool TA, bool TB>
__global__ void gemm_kernel_naive(GemmProblem<TA, TB> p) {
  wait_for_previous_kernel();
  const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
  if (j >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc = fmaf(p.a(i, k), p.b(k, j), acc);
  p.store(i, j, acc);
}

template <bool TA, bool TB>
void gemm_typed(CudaContext& ctx, const GemmProblem<TA, TB>& p, GemmVariant v) {
  if (v == GemmVariant::Naive) {
    const dim3 grid(ceil_div(p.N, 128), p.M);
    launch(ctx, "gemm_kernel_naive", gemm_kernel_naive<TA, TB>, grid, 128, 0, p);
    return;
  }
  run(ctx, v, p, static_cast<const GemmProblem<TA, TB>*>(nullptr));
}

}  // namespace

void gemm(CudaContext& ctx, bool trans_a, bool trans_b, int M, int N, int K, float alpha,
          const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
          GemmVariant variant) {
  if (M <= 0 || N <= 0) return;
  if (alpha == 0.f) K = 0;  // C = beta C: the store alone does it
  if (trans_a) {
    if (trans_b) gemm_typed(ctx, GemmProblem<true, true>{M, N, K, A, lda, B, ldb, alpha, beta, C, ldc}, variant);
    else gemm_typed(ctx, GemmProblem<true, false>{M, N, K, A, lda, B, ldb, alpha, beta, C, ldc}, variant);
  } else {
    if (trans_b) gemm_typed(ctx, GemmProblem<false, true>{M, N, K, A, lda, B, ldb, alpha, beta, C, ldc}, variant);
    else gemm_typed(ctx, GemmProblem<false, false>{M, N, K, A, lda, B, ldb, alpha, beta, C, ldc}, variant);
  }
}

void linear_forward(CudaContext& ctx, int N, int in, int out, Activation act, const float* x,
                    const float* w, const float* b, float* y, GemmVariant variant) {
  PCNN_CHECK(variant != GemmVariant::Naive, "cuda linear_forward: no naive variant");
  linear_forward_as(F32Store{}, N, in, out, act, x, w, b, y,
                    [&](const auto& p0, const auto* p1) { run(ctx, variant, p0, p1); });
}

void linear_backward(CudaContext& ctx, int N, int in, int out, Activation act, const float* x,
                     const float* w, const float* y, const float* dy, float* dx, float* dw,
                     float* db, GemmVariant variant) {
  PCNN_CHECK(variant != GemmVariant::Naive, "cuda linear_backward: no naive variant");
  linear_backward_as(F32Store{}, N, in, out, act, x, w, y, dy, dx, dw, db,
                     [&](const auto& p0, const auto* p1) { run(ctx, variant, p0, p1); });
}

}  // namespace cuda

void CudaBackend::gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                       const float* A, int lda, const float* B, int ldb, float beta, float* C,
                       int ldc) {
  ctx_.bind();
  cuda::gemm(ctx_, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
             cuda::GemmVariant::Auto);
}

void CudaBackend::linear_forward(int N, int in, int out, Activation act, const float* x,
                                 const float* w, const float* b, float* y) {
  ctx_.bind();
  cuda::linear_forward(ctx_, N, in, out, act, x, w, b, y, cuda::GemmVariant::Auto);
}

void CudaBackend::linear_backward(int N, int in, int out, Activation act, const float* x,
                                  const float* w, const float* y, const float* dy,
                                  float* /*scratch: d(pre-activation) is never materialised*/,
                                  float* dx, float* dw, float* db) {
  ctx_.bind();
  cuda::linear_backward(ctx_, N, in, out, act, x, w, y, dy, dx, dw, db, cuda::GemmVariant::Auto);
}

}  // namespace pcnn
