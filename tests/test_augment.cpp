// Data augmentation (op augment_batch, core/augment_math.hpp): on the reference, zero magnitudes
// are the identity, a certain flip mirrors, a crop shifts by whole pixels within its padding, the
// parameters are a function of (seed, step, image) that differs across steps and splits over
// replicas like one device, and images stay in their places (so with their labels); through the
// trainer, an identity augmentation trains bit for bit like none, and on each backend training
// steps with every method match serial.
#include <cmath>

#include "backends/registry.hpp"
#include "core/augment_math.hpp"
#include "core/check.hpp"
#include "models/model.hpp"
#include "tests/harness.hpp"
#include "tests/reference_checks.hpp"
#include "tests/synthetic.hpp"
#include "train/trainer.hpp"

namespace pcnn::test {

namespace {

constexpr float kFill = -0.75f;

struct Batch {
  int n = 4, c = 2, h = 9, w = 7;
  size_t size() const { return size_t(n) * c * h * w; }
};

std::vector<float> random_batch(const Batch& b, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> x(b.size());
  for (float& v : x) v = rng.uniform(-1.f, 3.f);
  return x;
}

// augment_batch on be at counter step.
std::vector<float> augment(Backend& be, const AugmentConfig& a, const Batch& b,
                           const std::vector<float>& x, int32_t step, uint32_t seed = 7) {
  DeviceArray<float> x_(be, x), y_(be, b.size()),
      fill_(be, std::vector<float>(size_t(b.c), kFill)),
      scratch_(be, size_t(b.n) * kElasticScratchPlanes * b.h * b.w);
  DeviceArray<int32_t> step_(be, std::vector<int32_t>{step});
  be.augment_batch(a, step_.get(), seed, b.n, b.c, b.h, b.w, fill_.get(), x_.get(),
                   scratch_.get(), y_.get());
  return y_.download();
}

AugmentConfig all_zero() {
  AugmentConfig a;
  a.elastic = a.affine = a.crop = a.flip = true;
  a.elastic_alpha = 0.f;
  a.affine_rotate = a.affine_scale = a.affine_shear = 0.f;
  a.crop_pad = 0;
  a.flip_probability = 0.f;
  return a;
}

AugmentConfig everything() {
  AugmentConfig a;
  a.elastic = a.affine = a.crop = a.flip = true;
  return a;
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("augmentation: zero magnitudes are the identity, bit for bit") {
  auto be = make_reference();
  const Batch b;
  const std::vector<float> x = random_batch(b, 1);
  const AugmentConfig zero = all_zero();
  CHECK(augment(*be, zero, b, x, 3) == x);
  for (int method = 0; method < 4; ++method) {  // each on its own
    AugmentConfig a = zero;
    a.elastic = method == 0;
    a.affine = method == 1;
    a.crop = method == 2;
    a.flip = method == 3;
    INFO("method " << method);
    CHECK(augment(*be, a, b, x, 11) == x);
  }
}

TEST_CASE("augmentation: a certain flip mirrors each row; a crop shifts within its padding") {
  auto be = make_reference();
  const Batch b;
  const std::vector<float> x = random_batch(b, 2);
  AugmentConfig flip;
  flip.flip = true;
  flip.flip_probability = 1.f;
  const std::vector<float> y = augment(*be, flip, b, x, 5);
  for (size_t row = 0; row < b.size() / b.w; ++row)
    for (int c = 0; c < b.w; ++c) REQUIRE(y[row * b.w + c] == x[row * b.w + b.w - 1 - c]);

  AugmentConfig crop;
  crop.crop = true;
  crop.crop_pad = 2;
  int shifted = 0;
  for (int32_t step = 0; step < 4; ++step) {
    const std::vector<float> z = augment(*be, crop, b, x, step);
    for (int j = 0; j < b.n; ++j) {
      // Some shift (dy, dx) in [-2, 2]^2 explains every channel of image j.
      bool found = false;
      for (int dy = -2; dy <= 2 && !found; ++dy)
        for (int dx = -2; dx <= 2 && !found; ++dx) {
          bool all = true;
          for (int ch = 0; ch < b.c && all; ++ch)
            for (int r = 0; r < b.h && all; ++r)
              for (int c = 0; c < b.w && all; ++c) {
                const size_t plane = (size_t(j) * b.c + ch) * b.h * b.w;
                const int sr = r + dy, sc = c + dx;
                const float want = (sr >= 0 && sr < b.h && sc >= 0 && sc < b.w)
                                       ? x[plane + sr * b.w + sc] : kFill;
                all = z[plane + r * b.w + c] == want;
              }
          if (all) {
            found = true;
            shifted += dy != 0 || dx != 0;
          }
        }
      CHECK_MESSAGE(found, "step " << step << " image " << j << " is no shift of its input");
    }
  }
  CHECK(shifted > 8);  // 16 images, each unshifted with probability 1/25
}

TEST_CASE("augmentation: a function of (seed, step, image), new at every step") {
  auto be = make_reference();
  const Batch b;
  const std::vector<float> x = random_batch(b, 3);
  const AugmentConfig a = everything();
  const std::vector<float> y = augment(*be, a, b, x, 17);
  CHECK(augment(*be, a, b, x, 17) == y);
  CHECK(augment(*be, a, b, x, 18) != y);
  CHECK(augment(*be, a, b, x, 17, 8) != y);  // another seed
  // Two images of one batch are transformed differently: an image repeated comes out twice
  // different (the batch of the same image n times).
  std::vector<float> same(b.size());
  const size_t image = size_t(b.c) * b.h * b.w;
  for (size_t i = 0; i < same.size(); ++i) same[i] = x[i % image];
  const std::vector<float> z = augment(*be, a, b, same, 17);
  CHECK(!std::equal(z.begin(), z.begin() + image, z.begin() + image));
}

TEST_CASE("augmentation: replicas splitting a batch augment it as one device does") {
  // R replicas of batch n/R at counters step*R + r draw image r*n/R + j of the step, as one
  // device with the whole batch at counter step (core/augment_math.hpp).
  auto be = make_reference();
  Batch whole;
  whole.n = 6;
  const std::vector<float> x = random_batch(whole, 4);
  const AugmentConfig a = everything();
  const int32_t step = 9;
  const std::vector<float> want = augment(*be, a, whole, x, step);
  for (int R : {2, 3}) {
    Batch shard = whole;
    shard.n = whole.n / R;
    const size_t part = shard.size();
    for (int r = 0; r < R; ++r) {
      const std::vector<float> xs(x.begin() + r * part, x.begin() + (r + 1) * part);
      const std::vector<float> got = augment(*be, a, shard, xs, step * R + r);
      INFO("replica " << r << " of " << R);
      CHECK(std::equal(got.begin(), got.end(), want.begin() + r * part));
    }
  }
}

TEST_CASE("augmentation: each image stays in its place, so with its label") {
  // Mild settings: every output image is nearer to its own input than to any other.
  auto be = make_reference();
  Batch b;
  b.n = 8; b.c = 1; b.h = 28; b.w = 28;
  const std::vector<float> x = random_batch(b, 5);
  AugmentConfig a = everything();
  a.elastic_alpha = 4.f;
  a.affine_rotate = 3.f; a.affine_scale = 0.03f; a.affine_shear = 0.03f;
  a.crop_pad = 0;
  a.flip = false;
  const std::vector<float> y = augment(*be, a, b, x, 2);
  const size_t image = size_t(b.h) * b.w;
  for (int j = 0; j < b.n; ++j) {
    int nearest = -1;
    double best = 1e30;
    for (int k = 0; k < b.n; ++k) {
      double d = 0;
      for (size_t e = 0; e < image; ++e) d += std::pow(y[j * image + e] - x[k * image + e], 2);
      if (d < best) best = d, nearest = k;
    }
    CHECK(nearest == j);
  }
}

TEST_CASE("augmentation: bad magnitudes are refused by the trainer in one line") {
  auto be = make_reference();
  const Dataset data = synthetic_dataset(16, 28, 28, 3);
  Model m(*be, builtin_model("lenet5"), 8, 1);
  TrainConfig cfg;
  cfg.batch = 8;
  cfg.augment.elastic = true;
  cfg.augment.elastic_sigma = 40.f;
  CHECK_THROWS_WITH_AS(Trainer(*be, m, data, {0.2f, 3.f}, cfg),
                       "augmentation: elastic sigma 40 is outside [1e-06, 16]", Error);
}

}  // TEST_SUITE

namespace {
std::vector<float> train_params(Backend& be, const AugmentConfig& a, int steps) {
  const Dataset data = synthetic_dataset(48, 28, 28, 5);
  Model m(be, builtin_model("lenet5"), 8, 42);
  TrainConfig cfg;
  cfg.batch = 8;
  cfg.seed = 3;
  cfg.optimizer.lr = 1e-3f;
  cfg.augment = a;
  Trainer t(be, m, data, {0.2f, 3.f}, cfg);
  for (int s = 0; s < steps; ++s) t.step();  // step 2 is captured, later ones replayed (GPU)
  return m.get_params();
}
}  // namespace

TEST_SUITE("backend") {

TEST_CASE("training with augmentation: identity changes nothing, every method matches serial") {
  const std::vector<float> plain = train_params(backend(), AugmentConfig{}, 4);
  // Identity augmentation trains exactly as none on a backend whose kernels are fixed; cudnn
  // picks its convolution algorithms by timing them (cudnnFind), so two runs may sum in another
  // order: 1e-6 is far below what a changed input would give (check below: got != plain).
  check_close("lenet5 parameters after 4 steps with identity augmentation",
              train_params(backend(), all_zero(), 4), plain, 1e-6);
  const std::vector<float> got = train_params(backend(), everything(), 4);
  CHECK(got != plain);
  // Tolerance: as the training steps of test_models.cpp (1e-4), the inputs differing by ulps.
  check_close("lenet5 parameters after 4 steps with every augmentation", got,
              train_params(reference(), everything(), 4), 1e-4);
}

}  // TEST_SUITE

}  // namespace pcnn::test
