// OpenMP data augmentation: images split statically over the threads, each image whole on one
// thread (its elastic field in its own slice of scratch). The formulas are serial's
// (core/augment_math.hpp), so the results are serial's bit for bit.
#include "backends/openmp/openmp_backend.hpp"
#include "core/augment_math.hpp"

namespace pcnn {

namespace {
// Image j of x -> image j of y.
void augment_one(const AugmentConfig& a, const ElasticTaps& taps, uint32_t key, int j, int C,
                 int H, int W, const float* fill, const float* x, float* scratch, float* y) {
  const int HW = H * W;
  const AugmentImage im = augment_image(a, key);
  // scratch is only there with elastic (it may be null otherwise)
  float* noise = a.elastic ? scratch + size_t(j) * kElasticScratchPlanes * HW : nullptr;
  float* smoothed = a.elastic ? noise + 2 * HW : nullptr;
  if (a.elastic) {
    for (int e = 0; e < 2 * HW; ++e)
      noise[e] = elastic_noise(im.noise_key, e / HW, H, W, (e % HW) / W, e % W);
    for (int row = 0; row < 2 * H; ++row)  // both planes' rows
      for (int c = 0; c < W; ++c)
        smoothed[row * W + c] = elastic_smooth(noise + row * W, W, 1, c, taps);
  }
  for (int r = 0; r < H; ++r)
    for (int c = 0; c < W; ++c) {
      float ex = 0.f, ey = 0.f, ys, xs;
      if (a.elastic) elastic_displacement(smoothed, H, W, r, c, taps, a.elastic_alpha, ex, ey);
      augment_source(im, H, W, r, c, ex, ey, ys, xs);
      for (int ch = 0; ch < C; ++ch) {
        const size_t plane = (size_t(j) * C + ch) * HW;
        y[plane + r * W + c] = bilinear_sample(x + plane, H, W, ys, xs, fill[ch]);
      }
    }
}
}  // namespace

void OpenMPBackend::augment_batch(const AugmentConfig& a, const int32_t* step, uint32_t seed,
                                  int N, int C, int H, int W, const float* fill, const float* x,
                                  float* scratch, float* y) {
  const ElasticTaps taps = a.elastic ? elastic_taps(a.elastic_sigma) : ElasticTaps{};
  const int32_t s = *step;
#pragma omp parallel for num_threads(threads_) schedule(static) if (N > 1)
  for (int j = 0; j < N; ++j)
    augment_one(a, taps, augment_image_key(seed, s, N, j), j, C, H, W, fill, x, scratch, y);
}

}  // namespace pcnn
