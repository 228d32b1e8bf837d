// Optimizer ops of the cuda backend (cudnn inherits them): one launch updates every parameter of
// the arena. The per-element rule is core/optimizer_math.hpp; the Vec4 variants move 16 bytes per
// access (the update is purely bandwidth-bound) and fall back to Scalar when a pointer is not
// 16-byte aligned. Every kernel returns at once when hyper[kHyperSkip] is set (check_step).
// Also the device-side step counter.
#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/optimizer.cuh"
#include "core/optimizer_math.hpp"

namespace pcnn {

namespace cuda {

namespace {

// SGD's hyper-parameters, read once the kernel before (check_step, which may set skip) is done.
__device__ inline SgdHyper sgd_hyper_after_previous_kernel(const float* hyper) {
  wait_for_previous_kernel();
  return SgdHyper::from(hyper);
}

// p, g, v (n): SGD with momentum, one element per thread step
__global__ void sgd_update_kernel_scalar(size_t n, float* p, const float* g, float* v,
                                         const float* hyper) {
  const SgdHyper h = sgd_hyper_after_previous_kernel(hyper);
  if (h.skip) return;  // check_step found the step not finite
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    sgd_step(h, p[i], g[i], v[i]);
}

// p, g, v (n), 16-byte aligned: float4 body, scalar tail
__global__ void sgd_update_kernel_vec4(size_t n, float* p, const float* g, float* v,
                                       const float* hyper) {
  const SgdHyper h = sgd_hyper_after_previous_kernel(hyper);
  if (h.skip) return;  // check_step found the step not finite
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t n4 = n / 4;
  float4* p4 = reinterpret_cast<float4*>(p);
  float4* v4 = reinterpret_cast<float4*>(v);
  const float4* g4 = reinterpret_cast<const float4*>(g);
  for (size_t i = first; i < n4; i += stride) {
    float4 pp = p4[i], vv = v4[i];
    const float4 gg = g4[i];
    sgd_step(h, pp.x, gg.x, vv.x);
    sgd_step(h, pp.y, gg.y, vv.y);
    sgd_step(h, pp.z, gg.z, vv.z);
    sgd_step(h, pp.w, gg.w, vv.w);
    p4[i] = pp;
    v4[i] = vv;
  }
  for (size_t i = n4 * 4 + first; i < n; i += stride) sgd_step(h, p[i], g[i], v[i]);
}

// The bias corrections need two powf: once per block, not once per element.
__device__ inline AdamHyper block_adam_hyper(const float* hyper, const int32_t* step) {
  __shared__ AdamHyper h;
  if (threadIdx.x == 0) h = AdamHyper::from(hyper, *step);
  __syncthreads();
  return h;
}

// p, g, m, v (n): Adam, one element per thread step
__global__ void adam_update_kernel_scalar(size_t n, float* p, const float* g, float* m,
                                          float* v, const float* hyper, const int32_t* step) {
  wait_for_previous_kernel();
  const AdamHyper h = block_adam_hyper(hyper, step);
  if (h.skip) return;  // after the block's barrier: every thread returns alike
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    adam_step(h, p[i], g[i], m[i], v[i]);
}

// p, g, m, v (n), 16-byte aligned: float4 body, scalar tail
__global__ void adam_update_kernel_vec4(size_t n, float* p, const float* g, float* m, float* v,
                                        const float* hyper, const int32_t* step) {
  wait_for_previous_kernel();
  const AdamHyper h = block_adam_hyper(hyper, step);
  if (h.skip) return;  // after the block's barrier: every thread returns alike
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t n4 = n / 4;
  float4* p4 = reinterpret_cast<float4*>(p);
  float4* m4 = reinterpret_cast<float4*>(m);
  float4* v4 = reinterpret_cast<float4*>(v);
  const float4* g4 = reinterpret_cast<const float4*>(g);
  for (size_t i = first; i < n4; i += stride) {
    float4 pp = p4[i], mm = m4[i], vv = v4[i];
    const float4 gg = g4[i];
    adam_step(h, pp.x, gg.x, mm.x, vv.x);
    adam_step(h, pp.y, gg.y, mm.y, vv.y);
    adam_step(h, pp.z, gg.z, mm.z, vv.z);
    adam_step(h, pp.w, gg.w, mm.w, vv.w);
    p4[i] = pp;
    m4[i] = mm;
    v4[i] = vv;
  }
  for (size_t i = n4 * 4 + first; i < n; i += stride) adam_step(h, p[i], g[i], m[i], v[i]);
}

// counter (1) += 1
__global__ void increment_kernel_single(int32_t* counter) {
  wait_for_previous_kernel();
  *counter += 1;
}

constexpr int kThreads = 256;

bool use_vec4(OptVariant variant, bool all_aligned) {
  PCNN_CHECK(variant != OptVariant::Vec4 || all_aligned,
             "cuda optimizer: Vec4 variant needs 16-byte aligned arrays");
  return variant == OptVariant::Vec4 || (variant == OptVariant::Auto && all_aligned);
}

}  // namespace

void sgd_update(CudaContext& ctx, size_t n, float* p, const float* g, float* v,
                const float* hyper, OptVariant variant) {
  if (n == 0) return;
  if (use_vec4(variant, aligned16(p) && aligned16(g) && aligned16(v))) {
    launch(ctx, "sgd_update_kernel_vec4", sgd_update_kernel_vec4,
           grid_for(n / 4 + 1, kThreads, ctx.sm_count()), kThreads, 0, n, p, g, v, hyper);
  } else {
    launch(ctx, "sgd_update_kernel_scalar", sgd_update_kernel_scalar,
           grid_for(n, kThreads, ctx.sm_count()), kThreads, 0, n, p, g, v, hyper);
  }
}

void adam_update(CudaContext& ctx, size_t n, float* p, const float* g, float* m, float* v,
                 const float* hyper, const int32_t* step, OptVariant variant) {
  if (n == 0) return;
  if (use_vec4(variant, aligned16(p) && aligned16(g) && aligned16(m) && aligned16(v))) {
    launch(ctx, "adam_update_kernel_vec4", adam_update_kernel_vec4,
           grid_for(n / 4 + 1, kThreads, ctx.sm_count()), kThreads, 0, n, p, g, m, v, hyper, step);
  } else {
    launch(ctx, "adam_update_kernel_scalar", adam_update_kernel_scalar,
           grid_for(n, kThreads, ctx.sm_count()), kThreads, 0, n, p, g, m, v, hyper, step);
  }
}

}  // namespace cuda

void CudaBackend::sgd_update(size_t n, float* params, const float* grads, float* velocity,
                             const float* hyper) {
  ctx_.bind();
  cuda::sgd_update(ctx_, n, params, grads, velocity, hyper, cuda::OptVariant::Auto);
}

void CudaBackend::adam_update(size_t n, float* params, const float* grads, float* m, float* v,
                              const float* hyper, const int32_t* step) {
  ctx_.bind();
  cuda::adam_update(ctx_, n, params, grads, m, v, hyper, step, cuda::OptVariant::Auto);
}

void CudaBackend::increment(int32_t* counter) {
  ctx_.bind();
  cuda::launch(ctx_, "increment_kernel_single", cuda::increment_kernel_single, 1, 1, 0, counter);
}

}  // namespace pcnn
