// Launchers of the dense kernels, with the variant the kernel lab chooses (CudaBackend::gemm,
// linear_forward and linear_backward call them with Auto): GEMM and the fused linear layer (bias
// + activation in the epilogue forward; activation derivative folded into the operand loads
// backward).
#pragma once

#include "backends/cuda/cuda_context.hpp"
#include "core/precision.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda {

// Naive: one thread per output, for the lab's "before". Small/SmallDeep/Medium/Large: tile
// configs of gemm_tile.cuh. SmallSplitK: small tiles with long K ranges split over several
// blocks (summed in a fixed order by the tile's last block); MediumSplitK splits only K >= 512.
// Auto (gemm_run.cuh): Large when it gives every multiprocessor a tile and every K is long
// (>= 256), else MediumSplitK when it gives two thirds of them one and every K fills a K step
// (>= 32), else SmallSplitK. Mma / MmaLarge: tensor-core tiles of 32 x 32 / 64 x 64
// (gemm_mma.cuh), for the 16-bit linear problems only, which Auto gives them from 64M
// multiply-adds up (linear_16.cu; MmaLarge when it gives every multiprocessor a tile).
// Vec64SplitK: the vector tile (64 x 64, 16-byte shared-memory reads), K >= 256 split; Auto
// takes it where Large does not fit and its blocks, splits counted, give every multiprocessor
// four, every K at least 64 (gemm_run.cuh vec_tiles_pay; PCNN_GEMM_VEC=0: never), in 16 bits
// before the tensor-core tiles. Vec32SplitK: the same vector blocks on 32 x 32 tiles of 64
// threads, K >= 256 split; Auto takes it for fp32 problems where Vec64 does not pay and its
// blocks give every multiprocessor two (gemm_run.cuh vec32_tiles_pay; PCNN_GEMM_VEC=1: never).
enum class GemmVariant {
  Auto, Naive, Small, SmallDeep, SmallSplitK, Medium, MediumSplitK, Large, Mma, MmaLarge,
  Vec64SplitK, Vec32SplitK
};

// Row-major C(M,N) = alpha op(A)(M,K) op(B)(K,N) + beta C; beta == 0 overwrites C
void gemm(CudaContext& ctx, bool trans_a, bool trans_b, int M, int N, int K, float alpha,
          const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
          GemmVariant variant = GemmVariant::Auto);

// x (N,in), w (out,in), b (out) or nullptr -> y (N,out) = act(x w^T + b); one launch
void linear_forward(CudaContext& ctx, int N, int in, int out, Activation act, const float* x,
                    const float* w, const float* b, float* y,
                    GemmVariant variant = GemmVariant::Auto);

// dy (N,out) of y = act(...) -> dw (out,in) = d^T x, db (out) = sum_n d, dx (N,in) = d w
// (dx, db skipped if nullptr), d = dy * act'(y) computed on the fly; one launch
void linear_backward(CudaContext& ctx, int N, int in, int out, Activation act, const float* x,
                     const float* w, const float* y, const float* dy, float* dx, float* dw,
                     float* db, GemmVariant variant = GemmVariant::Auto);

// The same two on 16-bit activations (p: BF16 or F16): x, y, dy, dx stored in 16 bits, widened
// as the tiles load them and rounded as the epilogues store them; w, b, dw, db and the sums fp32.
// On the tensor-core tiles (Auto) the products' other operands, the weights and d(pre-
// activation), are rounded to p as well.
void linear_forward_16(CudaContext& ctx, Precision p, int N, int in, int out, Activation act,
                       const uint16_t* x, const float* w, const float* b, uint16_t* y,
                       GemmVariant variant = GemmVariant::Auto);
void linear_backward_16(CudaContext& ctx, Precision p, int N, int in, int out, Activation act,
                        const uint16_t* x, const float* w, const uint16_t* y, const uint16_t* dy,
                        uint16_t* dx, float* dw, float* db,
                        GemmVariant variant = GemmVariant::Auto);

// The convolution forward as an implicit GEMM on the same tiles (conv2d_gemm.cu; any shape;
// conv2d_forward.cu's fallback): x (N,C,H,W), w (K,C,R,S), b (K) or nullptr -> act_out
// (N,K,P,Q) = act(conv + b).
void conv2d_forward_gemm(CudaContext& ctx, const Conv2dShape& s, Activation act, const float* x,
                         const float* w, const float* b, float* act_out);

// The convolution backward as implicit GEMMs on the same tiles (conv2d_gemm.cu; any shape;
// conv2d_backward.cu's fallback): dact (N,K,P,Q) = d(act_out), materialised; x (N,C,H,W),
// w (K,C,R,S) -> dw (K,C,R,S), db (K), dx (N,C,H,W), each skipped if nullptr, each overwritten.
void conv2d_backward_gemm(CudaContext& ctx, const Conv2dShape& s, const float* dact,
                          const float* x, const float* w, float* dx, float* dw, float* db);

}  // namespace pcnn::cuda
