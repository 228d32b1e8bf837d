// The 16-bit fused linear layer of the cuda backend (bf16 or fp16 activations, fp32 weights and
// sums): the tensor-core tiles (gemm_mma.cuh) where they pay, else the FMA tiles reading and
// writing 16 bits. Apart from gemm.cu so that an fp32 run loads none of this code.
#include <algorithm>

#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/gemm.cuh"
#include "backends/cuda/gemm_linear.cuh"
#include "backends/cuda/gemm_mma.cuh"
#include "backends/cuda/gemm_run.cuh"
#include "backends/cuda/launch.cuh"
#include "core/precision.hpp"

namespace pcnn {

namespace cuda {

namespace {

// The tensor-core tiles (gemm_mma.cuh) for 16-bit problems, in p's format; K >= 512 split as
// MediumSplitK does.
template <class T, class P0, class P1>
void launch_mma(CudaContext& ctx, Precision p, const P0& p0, const P1* p1) {
  const auto kernel = p == Precision::F16 ? gemm_kernel_mma<T, true, P0, P1>
                                          : gemm_kernel_mma<T, false, P0, P1>;
  launch_grids<T>(ctx, "gemm_kernel_mma", kernel, p0, p1, 512);
}

// Auto: the 64 x 64 tiles once every multiprocessor gets one, else 32 x 32.
template <class P0, class P1>
void run_mma(CudaContext& ctx, GemmVariant v, Precision p, const P0& p0, const P1* p1) {
  const auto large_tiles = [&](const auto& q) {
    return ceil_div(q.M, MmaTileLarge::BM) * ceil_div(q.N, MmaTileLarge::BN);
  };
  if (v == GemmVariant::Auto)
    v = large_tiles(p0) + (p1 ? large_tiles(*p1) : 0) >= ctx.sm_count() ? GemmVariant::MmaLarge
                                                                          : GemmVariant::Mma;
  if (v == GemmVariant::MmaLarge) launch_mma<MmaTileLarge>(ctx, p, p0, p1);
  else launch_mma<MmaTileSmall>(ctx, p, p0, p1);
}

// The multiply-adds from which Auto takes the tensor-core tiles for a 16-bit problem. Gemm lab,
// H100, 2026-12-05, bf16: the FMA tiles reading 16 bits were faster on every LeNet-5 dense layer
// at batch 64 and 1024 (1024x400->120 forward 14.0 us vs 15.6; 1024x120->84 backward 11.8 vs
// 20.8; 64x400->120 forward 5.1 vs 15.4), the tensor cores on Simard's 1024x1250->100 (128M:
// forward 26.4 us vs 34.8) and the mlp's 1024x784->300 (241M: 36.3 vs 51.3). Between 49M and
// 128M: a guess. The backward's two problems are judged by the larger: their sum put LeNet-5's
// fc1 backward at 1024 (2 x 49M) on the tensor tiles, 24.5 us against the FMA tiles' 23.8.
constexpr double kMmaMinMacs = 64e6;

template <class P0, class P1>
bool tensor_cores_pay(const CudaContext& ctx, const P0& p0, const P1* p1) {
  if (!ctx.mma_allowed()) return false;
  if (ctx.mma_forced()) return true;
  const auto macs = [](const auto& q) { return double(q.M) * q.N * q.K; };
  return std::max(macs(p0), p1 ? macs(*p1) : 0.0) >= kMmaMinMacs;
}

// On the tensor-core tiles where they pay (above) or are asked for, else on the FMA tiles reading
// and writing 16 bits.
template <class P0, class P1>
void run_16(CudaContext& ctx, Precision prec, GemmVariant v, const P0& p0, const P1* p1) {
  const bool tensor = v == GemmVariant::Mma || v == GemmVariant::MmaLarge;
  // The vector tile first where it pays (gemm lab, H100, session 25, bf16: Simard's 1250 -> 100
  // backward at 1024 40.2 us against 54.2 on the 64 x 64 tensor tile).
  // Not the 32 x 32 vector tile: in a step it lost in 16 bits (gemm_run.cuh vec32_tiles_pay;
  // again in session 37, H100: LeNet-5's bf16 step at 1024 +6 us with it).
  const GemmVariant fma = tensor ? v : pick(ctx, v, p0, p1, false);
  if (tensor || (v == GemmVariant::Auto && fma != GemmVariant::Vec64SplitK &&
                 tensor_cores_pay(ctx, p0, p1)))
    run_mma(ctx, v, prec, p0, p1);
  else
    run(ctx, fma, p0, p1);
}

}  // namespace

void linear_forward_16(CudaContext& ctx, Precision p, int N, int in, int out, Activation act,
                       const uint16_t* x, const float* w, const float* b, uint16_t* y,
                       GemmVariant variant) {
  PCNN_CHECK(variant != GemmVariant::Naive, "cuda linear_forward_16: no naive variant");
  linear_forward_as(Bits16Store{p}, N, in, out, act, x, w, b, y,
                    [&](const auto& p0, const auto* p1) { run_16(ctx, p, variant, p0, p1); });
}

void linear_backward_16(CudaContext& ctx, Precision p, int N, int in, int out, Activation act,
                        const uint16_t* x, const float* w, const uint16_t* y, const uint16_t* dy,
                        uint16_t* dx, float* dw, float* db, GemmVariant variant) {
  PCNN_CHECK(variant != GemmVariant::Naive, "cuda linear_backward_16: no naive variant");
  linear_backward_as(Bits16Store{p}, N, in, out, act, x, w, y, dy, dx, dw, db,
                     [&](const auto& p0, const auto* p1) { run_16(ctx, p, variant, p0, p1); });
}

}  // namespace cuda

// Native 16-bit dense layers: the staging the contract offers is not needed.
void CudaBackend::linear_forward_16(Precision p, int N, int in, int out, Activation act,
                                    const uint16_t* x, const float* w, const float* b,
                                    float* /*staging*/, uint16_t* y) {
  ctx_.bind();
  cuda::linear_forward_16(ctx_, p, N, in, out, act, x, w, b, y, cuda::GemmVariant::Auto);
}

void CudaBackend::linear_backward_16(Precision p, int N, int in, int out, Activation act,
                                     const uint16_t* x, const float* w, const uint16_t* y,
                                     const uint16_t* dy, float* /*scratch*/,
                                     float* /*staging*/, uint16_t* dx, float* dw, float* db) {
  ctx_.bind();
  cuda::linear_backward_16(ctx_, p, N, in, out, act, x, w, y, dy, dx, dw, db,
                           cuda::GemmVariant::Auto);
}

}  // namespace pcnn
