// Serial data augmentation, the reference: per image its parameters, the elastic field's noise
// and row smoothing into scratch, then one bilinear sample per output pixel and channel.
#include "backends/serial/serial_backend.hpp"
#include "core/augment_math.hpp"

namespace pcnn {

void SerialBackend::augment_batch(const AugmentConfig& a, const int32_t* step, uint32_t seed,
                                  int N, int C, int H, int W, const float* fill, const float* x,
                                  float* scratch, float* y) {
  const int HW = H * W;
  const ElasticTaps taps = a.elastic ? elastic_taps(a.elastic_sigma) : ElasticTaps{};
  for (int j = 0; j < N; ++j) {
    const AugmentImage im = augment_image(a, augment_image_key(seed, *step, N, j));
    // scratch is only there with elastic (it may be null otherwise)
    float* noise = a.elastic ? scratch + size_t(j) * kElasticScratchPlanes * HW : nullptr;
    float* smoothed = a.elastic ? noise + 2 * HW : nullptr;
    if (a.elastic) {
      for (int e = 0; e < 2 * HW; ++e) noise[e] = elastic_noise(im.noise_key, e);
      for (int comp = 0; comp < 2; ++comp)
        for (int r = 0; r < H; ++r)
          for (int c = 0; c < W; ++c)
            smoothed[comp * HW + r * W + c] =
                elastic_smooth(noise + comp * HW + r * W, W, 1, c, taps);
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
}

}  // namespace pcnn
