// OpenMP data augmentation: images split statically over the threads, each image whole on one
// thread. The elastic smoothing runs a line at a time, the taps in the outer loop and the
// pixels of the line in the inner, contiguous one (it vectorises); each pixel still sums its
// taps in ascending order from 0, as elastic_smooth does, so the field is serial's bit for bit.
#include "backends/openmp/openmp_backend.hpp"
#include "core/augment_math.hpp"

namespace pcnn {

namespace {
// rows lines of W values: dst[c] = sum over d of w[d] * src[c + d], zero outside the line.
void smooth_rows(const float* src, float* dst, int rows, int W, const ElasticTaps& t) {
  for (int row = 0; row < rows; ++row) {
    const float* s = src + size_t(row) * W;
    float* out = dst + size_t(row) * W;
    for (int c = 0; c < W; ++c) out[c] = 0.f;
    for (int d = -t.radius; d <= t.radius; ++d) {
      const float w = t.w[d + t.radius];
      const int lo = d < 0 ? -d : 0, hi = d > 0 ? W - d : W;
      for (int c = lo; c < hi; ++c) out[c] = fmaf(w, s[c + d], out[c]);
    }
  }
}

// One H x W plane smoothed along its columns, a row of outputs at a time.
void smooth_columns(const float* src, float* dst, int H, int W, const ElasticTaps& t) {
  for (int r = 0; r < H; ++r) {
    float* out = dst + size_t(r) * W;
    for (int c = 0; c < W; ++c) out[c] = 0.f;
    const int lo = r - t.radius < 0 ? -r : -t.radius;
    const int hi = r + t.radius > H - 1 ? H - 1 - r : t.radius;
    for (int d = lo; d <= hi; ++d) {
      const float w = t.w[d + t.radius];
      const float* s = src + size_t(r + d) * W;
      for (int c = 0; c < W; ++c) out[c] = fmaf(w, s[c], out[c]);
    }
  }
}

// Image j of x -> image j of y.
void augment_one(const AugmentConfig& a, const ElasticTaps& taps, uint32_t key, int j, int C,
                 int H, int W, const float* fill, const float* x, float* scratch, float* y) {
  const int HW = H * W;
  const AugmentImage im = augment_image(a, key);
  // With elastic: noise -> row-smoothed planes -> the smoothed field, back in the noise planes.
  float* field = a.elastic ? scratch + size_t(j) * kElasticScratchPlanes * HW : nullptr;
  if (a.elastic) {
    float* rows = field + 2 * HW;
    for (int e = 0; e < 2 * HW; ++e) field[e] = elastic_noise(im.noise_key, e);
    smooth_rows(field, rows, 2 * H, W, taps);
    for (int comp = 0; comp < 2; ++comp)
      smooth_columns(rows + comp * HW, field + comp * HW, H, W, taps);
  }
  for (int r = 0; r < H; ++r)
    for (int c = 0; c < W; ++c) {
      float ex = 0.f, ey = 0.f, ys, xs;
      if (a.elastic) {
        ex = a.elastic_alpha * field[r * W + c];
        ey = a.elastic_alpha * field[HW + r * W + c];
      }
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
