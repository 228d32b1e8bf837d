// Launchers of the convolution kernels, with the knobs the kernel lab turns. Every launcher
// takes a plan whose zero fields mean "let the heuristic choose"; the backend's convolution ops
// (conv2d_forward.cu, conv2d_backward.cu) always pass the default plan. The launchers take the
// backend, not only its context: where a shape cannot be fused they fall back on its standalone
// pooling, activation and fill ops.
#pragma once

#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_context.hpp"
#include "core/precision.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda {

// Direct: a thread per output, straight from global memory (any shape; the fallback).
// Tiled: a block stages one whole (padded) input image and a tile of filters in shared memory.
// Ring: a block walks down the output rows keeping only the input rows still needed in a
//       circular shared-memory buffer, exchanging stride*pool rows per step (cp.async).
// Gemm: an implicit GEMM on the dense tile engine writes the pre-pool output, pooling runs after
//       it (any shape; what Auto runs when neither Tiled nor Ring fits).
// Mma:  16-bit x and y only: the Tiled kernel's block on tensor cores (mma.sync m16n8k16, the
//       filters rounded to the activations' format; conv2d_forward_mma.cuh); Auto's choice for
//       16 bits where it fits.
// Strip: 5x5 at unit stride, 2x2 pooling fused: a thread a strip of 5 or 7 pooled outputs of
//       1-4 filters from registers, the input read through L1 (conv2d_forward_strip.cuh); Auto's
//       choice where it fits and the batch gives it threads enough (CudaContext::strip_level).
enum class ConvFwdVariant { Auto, Direct, Tiled, Ring, Gemm, Mma, Strip };
struct ConvForwardPlan {
  ConvFwdVariant variant = ConvFwdVariant::Auto;
  int k_per_thread = 0;  // filters each thread computes (1, 2 or 4; Strip: 1 to 4)
  int k_tiles = 0;       // blocks per image, each with K/k_tiles filters
};

// Direct: a thread per dx element and a block per weight, from global memory (any shape).
// Tiled: one launch; blocks [0, dw_blocks) reduce the weight gradient of a chunk of images
//        and a tile of filters (the last block of each tile sums the chunks in a fixed order),
//        the others compute dx for one image and a tile of channels. d(pre-activation) is
//        computed on the fly from dy and the kept indices by every block that needs it.
// Split: the same blocks in two launches, the weight-gradient blocks and then the data-gradient
//        blocks in a kernel of their own, sized for several blocks a multiprocessor (in one
//        launch every block gets the registers and shared memory of the larger kind, one a
//        multiprocessor). Without dx (or without dw) it is Tiled.
// Gemm: d(pre-activation) materialised, then [dw | db] and dx as implicit GEMMs on the dense tile
//       engine (any shape; what Auto runs when Tiled does not fit, e.g. 16 -> 32 channels 5x5,
//       whose shared-memory tiles Tiled cannot hold).
// Mma:  16-bit x, y, dy and dx only: the weight gradient on tensor cores (conv2d_backward_mma.cu:
//       chunks of images, then their sums in chunk order), the data gradient too at unit stride
//       with square filters (the forward's tensor-core block on the flipped filters), else by
//       Split's kernel; Auto's choice for 16 bits where it fits.
// Strip: no dx, one input channel, 5x5 at unit stride, 2x2 pooling: the weight gradient a strip of
//       pooled outputs a thread, as the forward's Strip (conv2d_backward_strip.cu; dw_k_tile 1 or 2
//       filters a thread, dw_chunks, dw_threads 32, 64 or 128); Auto's choice where it fits in
//       blocks of 128 (CudaContext::strip_level).
enum class ConvBwdVariant { Auto, Direct, Tiled, Split, Gemm, Mma, Strip, Argmax };
struct ConvBackwardPlan {
  ConvBwdVariant variant = ConvBwdVariant::Auto;
  int dw_k_tile = 0;  // filters per weight-gradient block (1, 2, 4, 6, 8 or 16)
  int dw_chunks = 0;  // image chunks of the weight-gradient reduction
  int dx_c_tiles = 0; // channel tiles per image of the data gradient
  int dx_threads = 0;         // threads of a data-gradient block (Split only; at most 256)
  bool generic_taps = false;  // the kernels compiled for any filter size, not those for 3x3 / 5x5
  // Most threads of a weight-gradient block (0: by the shape, conv2d_backward.cu auto_dw_threads;
  // else at most 512). Fewer, with more chunks, let two or more such blocks share a
  // multiprocessor, one staging while another computes.
  int dw_threads = 0;
  // Split's data gradient one image a lane (strided layers it is compiled for: lanes_fit in
  // conv2d_backward_tiled.cuh): 0 where the context allows it (PCNN_CONV_LANES), -1 never, else
  // that many items a block at most (1-8); the strip width (4 or 7, 0: 7), the filters staged
  // a round (0: as many as fit 48 KB) and the warps an item (1 or 2, 0: 2).
  int dx_lanes = 0;
  int dx_lanes_jw = 0;
  int dx_lanes_kc = 0;
  int dx_lanes_ksplit = 0;
  // Its weight gradient one image a lane too (the same shapes): 0 where the context allows it
  // (PCNN_CONV_LANES unset or 2), -1 never, else that many chunks of the batch at most.
  int dw_lanes = 0;
};

// Whether Auto takes Mma for a 16-bit case it fits (PCNN_MMA=0: never, 1: always). Conv
// lab, H100, 2026-12-05: at batch 1024 Mma takes 0.58-0.67 of the best FMA kernel's time on
// LeNet-5 conv2 and Simard 2003 conv2, forward and backward; at batch 64 it is level or slower
// (LeNet-5 conv2 backward 31.4 vs 24.4 us, Simard conv2 forward 15.7 vs 8.7 us); with one input
// channel (LeNet-5 conv1: its k16 steps mostly padding) 19.3 vs 4.8 us at 64, level at 1024.
// The 256 images between the measured sizes are a guess.
inline bool auto_takes_mma(const CudaContext& ctx, const Conv2dShape& s) {
  return ctx.mma_allowed() && (ctx.mma_forced() || (s.C >= 2 && s.N >= 256));
}

// x (N,C,H,W), w (K,C,R,S), b (K) or nullptr -> y = pool(act(conv + b)) (or act(conv + b) when
// epi.pool == None), and kept as the fused op's contract says (core/op_list.hpp). scratch (N*K*P*Q
// floats) is needed only when the pooling runs after the kernel (it is not fused into it).
void conv2d_fused_forward(CudaBackend& be, const Conv2dShape& s, const ConvEpilogue& epi,
                          const float* x, const float* w, const float* b, const ConvKept& kept,
                          float* scratch, float* y, const ConvForwardPlan& plan = {});

// From dy (gradient of y), y and kept back through pool and act to dw (K,C,R,S) and db (K)
// (overwritten; each may be nullptr) and dx (N,C,H,W) (overwritten; skipped if nullptr). y may
// be nullptr when epi is {None, None}. dact_scratch (N*K*P*Q floats or nullptr) is used only
// when the pooling cannot be folded in (overlapping windows) or the GEMM path materialises
// d(pre-activation).
void conv2d_fused_backward(CudaBackend& be, const Conv2dShape& s, const ConvEpilogue& epi,
                           const float* x, const float* w, const ConvKept& kept, const float* y,
                           const float* dy, float* dact_scratch, float* dx, float* dw, float* db,
                           const ConvBackwardPlan& plan = {});

// The same two on 16-bit x, y, dy and dx (p: BF16 or F16; act_io.cuh), the same kernels and
// sums, so the bits of the composed default (widen, the fp32 op, round); or with an fp32 input
// (x32, x then nullptr; x16 false), as a model's first layer reads the data (core/op_list.hpp).
// Only where the *_native_16 test says the plan's kernels read and write those tensors
// themselves (the Tiled, Ring, Split and Direct kernels with any pooling fused; the tensor-core
// ones only with x in 16 bits); the backend runs the composed default elsewhere.
bool conv2d_forward_native_16(CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                              bool x16, const ConvForwardPlan& plan);
void conv2d_fused_forward_16(CudaBackend& be, Precision p, const Conv2dShape& s,
                             const ConvEpilogue& epi, const uint16_t* x, const float* x32,
                             const float* w, const float* b, const ConvKept& kept, uint16_t* y,
                             const ConvForwardPlan& plan = {});
bool conv2d_backward_native_16(CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                               bool want_dw, bool want_dx, bool x16,
                               const ConvBackwardPlan& plan);
void conv2d_fused_backward_16(CudaBackend& be, Precision p, const Conv2dShape& s,
                              const ConvEpilogue& epi, const uint16_t* x, const float* x32,
                              const float* w, const ConvKept& kept, const uint16_t* y,
                              const uint16_t* dy, uint16_t* dx, float* dw, float* db,
                              const ConvBackwardPlan& plan = {});

// Whether a variant can run this case in one launch (the lab skips the others).
bool conv2d_forward_supported(CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                              const ConvForwardPlan& plan);
bool conv2d_backward_supported(CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                               bool want_dx, const ConvBackwardPlan& plan);

}  // namespace pcnn::cuda
