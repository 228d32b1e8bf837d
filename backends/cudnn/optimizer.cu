// SGD (momentum, L2) and Adam over the parameter arena, with the shared core/optimizer_math.hpp
// update rules; plus the device-side step counter.
#include "backends/cudnn/cudnn_check.hpp"
#include "backends/cudnn/launch.cuh"
#include "backends/cudnn/optimizer.cuh"
#include "core/optimizer_math.hpp"

namespace pcnn::vendor {

namespace {

// params, grads, velocity (n); hyper float[kHyperCount] -> params, velocity updated in place
__global__ void sgd_update_kernel_grid(size_t n, float* params, const float* grads,
                                       float* velocity, const float* hyper) {
  const SgdHyper h = SgdHyper::from(hyper);
  PCNN_GRID_STRIDE_LOOP(i, n) {
    float p = params[i], v = velocity[i];
    sgd_step(h, p, grads[i], v);
    params[i] = p;
    velocity[i] = v;
  }
}

// params, grads, m, v (n); hyper float[kHyperCount]; step (1) -> params, m, v updated in place
__global__ void adam_update_kernel_grid(size_t n, float* params, const float* grads, float* m,
                                        float* v, const float* hyper, const int32_t* step) {
  const AdamHyper h = AdamHyper::from(hyper, *step);  // once per thread, not per element
  PCNN_GRID_STRIDE_LOOP(i, n) {
    float p = params[i], mi = m[i], vi = v[i];
    adam_step(h, p, grads[i], mi, vi);
    params[i] = p;
    m[i] = mi;
    v[i] = vi;
  }
}

// counter (1) -> counter + 1
__global__ void increment_kernel_single(int32_t* counter) { *counter += 1; }

}  // namespace

void launch_sgd_update(cudaStream_t stream, size_t n, float* params, const float* grads,
                       float* velocity, const float* hyper) {
  if (n == 0) return;
  sgd_update_kernel_grid<<<grid_for(n), kThreads, 0, stream>>>(n, params, grads, velocity,
                                                               hyper);
  PCNN_CUDA_CHECK_LAUNCH();
}

void launch_adam_update(cudaStream_t stream, size_t n, float* params, const float* grads,
                        float* m, float* v, const float* hyper, const int32_t* step) {
  if (n == 0) return;
  adam_update_kernel_grid<<<grid_for(n), kThreads, 0, stream>>>(n, params, grads, m, v, hyper,
                                                                step);
  PCNN_CUDA_CHECK_LAUNCH();
}

void launch_increment(cudaStream_t stream, int32_t* counter) {
  increment_kernel_single<<<1, 1, 0, stream>>>(counter);
  PCNN_CUDA_CHECK_LAUNCH();
}

}  // namespace pcnn::vendor
