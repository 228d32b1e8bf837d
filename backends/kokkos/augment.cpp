// Kokkos data augmentation: one team per image. The team fills the elastic noise, smooths its
// rows, then samples every output pixel (all channels), with barriers between the phases; each
// thread draws the image's parameters itself (a few hashes), so nothing is broadcast.
#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/augment_math.hpp"

namespace pcnn {

void KokkosBackend::augment_batch(const AugmentConfig& a, const int32_t* step, uint32_t seed,
                                  int N, int C, int H, int W, const float* fill, const float* x,
                                  float* scratch, float* y) {
  PCNN_KK_REGION(augment_batch);
  const AugmentConfig cfg = a;
  const ElasticTaps taps = a.elastic ? elastic_taps(a.elastic_sigma) : ElasticTaps{};
  const int HW = H * W;
  Kokkos::parallel_for("pcnn::augment_batch", kk::team_policy(N, kk::row_team_size()),
                       KOKKOS_LAMBDA(const kk::Member& team) {
    const int j = team.league_rank();
    const AugmentImage im = augment_image(cfg, augment_image_key(seed, *step, N, j));
    // scratch is only there with elastic (it may be null otherwise)
    float* noise = cfg.elastic ? scratch + size_t(j) * kElasticScratchPlanes * HW : nullptr;
    float* smoothed = cfg.elastic ? noise + 2 * HW : nullptr;
    if (cfg.elastic) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 2 * HW), [&](int e) {
        noise[e] = elastic_noise(im.noise_key, e);
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 2 * HW), [&](int e) {
        smoothed[e] = elastic_smooth(noise + (e / W) * W, W, 1, e % W, taps);
      });
      team.team_barrier();
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, HW), [&](int e) {
      const int r = e / W, c = e % W;
      float ex = 0.f, ey = 0.f, ys, xs;
      if (cfg.elastic)
        elastic_displacement(smoothed, H, W, r, c, taps, cfg.elastic_alpha, ex, ey);
      augment_source(im, H, W, r, c, ex, ey, ys, xs);
      for (int ch = 0; ch < C; ++ch) {
        const size_t plane = (size_t(j) * C + ch) * HW;
        y[plane + e] = bilinear_sample(x + plane, H, W, ys, xs, fill[ch]);
      }
    });
  });
}

}  // namespace pcnn
