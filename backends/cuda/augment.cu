// Data augmentation of the cuda backend (cudnn inherits it): block j augments image j. Its
// threads fill the elastic noise and smooth its rows (in scratch, global memory: one block
// writes and reads it, __syncthreads orders them), then sample every output pixel. Every thread
// draws the image's parameters itself; the formulas are core/augment_math.hpp's, *step is read
// on the device, so the launch replays inside the captured step graph.
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"
#include "core/augment_math.hpp"

namespace pcnn {

namespace cuda {

namespace {

__global__ void augment_batch_kernel(AugmentConfig a, ElasticTaps taps, const int32_t* step,
                                     uint32_t seed, int N, int C, int H, int W,
                                     const float* fill, const float* x, float* scratch,
                                     float* y) {
  wait_for_previous_kernel();
  const int j = blockIdx.x, HW = H * W;
  const AugmentImage im = augment_image(a, augment_image_key(seed, *step, N, j));
  // scratch is only there with elastic (it may be null otherwise)
  float* noise = a.elastic ? scratch + size_t(j) * kElasticScratchPlanes * HW : nullptr;
  float* smoothed = a.elastic ? noise + 2 * HW : nullptr;
  if (a.elastic) {
    for (int e = threadIdx.x; e < 2 * HW; e += blockDim.x)
      noise[e] = elastic_noise(im.noise_key, e);
    __syncthreads();
    for (int e = threadIdx.x; e < 2 * HW; e += blockDim.x)
      smoothed[e] = elastic_smooth(noise + (e / W) * W, W, 1, e % W, taps);
    __syncthreads();
  }
  for (int e = threadIdx.x; e < HW; e += blockDim.x) {
    const int r = e / W, c = e % W;
    float ex = 0.f, ey = 0.f, ys, xs;
    if (a.elastic) elastic_displacement(smoothed, H, W, r, c, taps, a.elastic_alpha, ex, ey);
    augment_source(im, H, W, r, c, ex, ey, ys, xs);
    for (int ch = 0; ch < C; ++ch) {
      const size_t plane = (size_t(j) * C + ch) * HW;
      y[plane + e] = bilinear_sample(x + plane, H, W, ys, xs, fill[ch]);
    }
  }
}

}  // namespace

}  // namespace cuda

void CudaBackend::augment_batch(const AugmentConfig& a, const int32_t* step, uint32_t seed,
                                int N, int C, int H, int W, const float* fill, const float* x,
                                float* scratch, float* y) {
  ctx_.bind();
  if (N == 0) return;
  PCNN_CHECK(C >= 1 && H >= 1 && W >= 1,
             "cuda augment_batch: empty images " << C << "x" << H << "x" << W);
  const ElasticTaps taps = a.elastic ? elastic_taps(a.elastic_sigma) : ElasticTaps{};
  const int area = H * W;
  const int threads = area >= 512 ? 256 : (area < 32 ? 32 : (area + 31) / 32 * 32);
  cuda::launch(ctx_, "augment_batch_kernel", cuda::augment_batch_kernel, N, threads, 0, a, taps,
               step, seed, N, C, H, W, fill, x, scratch, y);
}

}  // namespace pcnn
