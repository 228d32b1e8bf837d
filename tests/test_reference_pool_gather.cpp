// The reference's pooling and batch gathering against values worked out by hand: the max-pool tie
// rule (the first maximum in row-major window order takes the gradient, and its place in the
// window is the argmax byte kept for the fused backward), average pooling with a
// ragged edge and overlapping windows, and which images and labels a batch holds, normalised.
#include <set>

#include "backends/device_array.hpp"
#include "core/batch_math.hpp"
#include "core/shapes.hpp"
#include "core/shuffle.hpp"
#include "tests/reference_checks.hpp"

namespace pcnn::test {

namespace {

struct Pooled {
  std::vector<float> y, dx;
  std::vector<float> argmax, dx_argmax;  // max: the kept bytes, and the gradient routed by them
};

// Forward, then backward with dy, on the reference; max pooling also through its kept argmax
// (max_pool_backward_argmax, no activation), which must route dy where pool2d_backward does.
Pooled pool(PoolKind kind, const Pool2dShape& s, const std::vector<float>& x,
            const std::vector<float>& dy) {
  auto be = make_reference();
  DeviceArray<float> dx_(*be, s.x_size()), x_(*be, x), y_(*be, s.y_size()), dy_(*be, dy);
  DeviceArray<uint8_t> argmax_(*be, s.y_size());
  const bool max = kind == PoolKind::Max;
  be->pool2d_forward(kind, s, x_.get(), y_.get(), max ? argmax_.get() : nullptr);
  be->pool2d_backward(kind, s, x_.get(), dy_.get(), dx_.get());
  Pooled got{y_.download(), dx_.download(), {}, {}};
  if (!max) return got;
  for (uint8_t b : argmax_.download()) got.argmax.push_back(float(b));
  be->max_pool_backward_argmax(s, Activation::None, argmax_.get(), y_.get(), dy_.get(), dx_.get());
  got.dx_argmax = dx_.download();
  return got;
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("serial reference: max pooling routes each gradient to the first maximum of its window") {
  Pool2dShape s;
  s.N = 1; s.C = 2; s.H = 4; s.W = 4; s.window = 2; s.stride = 2;
  const std::vector<float> x = {
      // plane 0: a three-way tie, a tie on the second row, all negative, a diagonal tie
      3, 3, 1, 2,
      3, 1, 2, 2,
      -3, -1, 5, 0,
      -2, -1, 0, 5,
      // plane 1: every value equal
      7, 7, 7, 7,  7, 7, 7, 7,  7, 7, 7, 7,  7, 7, 7, 7};
  const Pooled got = pool(PoolKind::Max, s, x, {1, 2, 3, 4, 5, 6, 7, 8});
  check_reference("pool2d_forward max", got.y, {3, 2, -1, 5, 7, 7, 7, 7}, 0.0);
  // Row-major places in each 2x2 window: (0,0), (0,1), (0,1), (0,0); every tie of plane 1 at 0.
  check_reference("pool2d_forward max argmax", got.argmax, {0, 1, 1, 0, 0, 0, 0, 0}, 0.0);
  check_reference("pool2d_backward max (first maximum wins ties)", got.dx,
                  {1, 0, 0, 2,
                   0, 0, 0, 0,
                   0, 3, 4, 0,
                   0, 0, 0, 0,
                   5, 0, 6, 0,
                   0, 0, 0, 0,
                   7, 0, 8, 0,
                   0, 0, 0, 0},
                  0.0);
  check_reference("max_pool_backward_argmax", got.dx_argmax, got.dx, 0.0);
}

TEST_CASE("serial reference: overlapping max-pool windows add the gradients of shared maxima") {
  Pool2dShape s;
  s.C = 2; s.H = 3; s.W = 3; s.window = 2; s.stride = 1;
  // Plane 0: every window holds a tie, and the first maximum of each is a different element.
  // Plane 1: one maximum shared by all four windows.
  const Pooled got = pool(PoolKind::Max, s,
                          {1, 1, 0,  1, 1, 0,  0, 0, 0,
                           0, 0, 0,  0, 2, 0,  0, 0, 0},
                          {1, 2, 3, 4, 1, 2, 3, 4});
  check_reference("pool2d_forward max, stride 1", got.y, {1, 1, 1, 1, 2, 2, 2, 2}, 0.0);
  // Plane 1's 2 sits at (1,1), (1,0), (0,1), (0,0) of the four windows: bytes 3, 2, 1, 0.
  check_reference("pool2d_forward max argmax, stride 1", got.argmax, {0, 0, 0, 0, 3, 2, 1, 0}, 0.0);
  check_reference("pool2d_backward max, stride 1", got.dx,
                  {1, 2, 0,  3, 4, 0,  0, 0, 0,
                   0, 0, 0,  0, 10, 0,  0, 0, 0},
                  0.0);
  check_reference("max_pool_backward_argmax, stride 1", got.dx_argmax, got.dx, 0.0);
}

TEST_CASE("serial reference: padded max pooling never takes a padded position") {
  Pool2dShape s;
  s.H = 3; s.W = 3; s.window = 2; s.stride = 2; s.pad = 1;  // 2x2 windows over rows -1..0, 1..2
  // All negative: a padded 0 would win every window if padding were read.
  const std::vector<float> x = {-5, -2, -3,
                                -4, -9, -1,
                                -7, -6, -8};
  const Pooled got = pool(PoolKind::Max, s, x, {1, 2, 3, 4});
  // Windows: {-5} | {-2, -3} / {-4, -7} | {-9, -1, -6, -8}
  check_reference("pool2d_forward max pad 1", got.y, {-5, -2, -4, -1}, 0.0);
  check_reference("pool2d_backward max pad 1", got.dx, {1, 2, 0,  3, 0, 4,  0, 0, 0}, 0.0);
  // Counted over the whole window, padding included: (1,1) of the first, (1,0), (0,1), (0,1).
  check_reference("pool2d_forward max argmax pad 1", got.argmax, {3, 2, 1, 1}, 0.0);
  check_reference("max_pool_backward_argmax pad 1", got.dx_argmax, got.dx, 0.0);
}

TEST_CASE("serial reference: padded average pooling divides by the in-image count") {
  Pool2dShape s;
  s.H = 3; s.W = 3; s.window = 3; s.stride = 2; s.pad = 1;  // corners hold 4 elements, not 9
  std::vector<float> x(9);
  for (int i = 0; i < 9; ++i) x[size_t(i)] = float(i);
  const Pooled got = pool(PoolKind::Avg, s, x, {4, 8, 12, 16});
  // Windows: rows/cols 0..1 | 0..1 x 1..2 | 1..2 x 0..1 | 1..2 x 1..2, 4 elements each
  check_reference("pool2d_forward avg pad 1", got.y,
                  {(0 + 1 + 3 + 4) / 4.f, (1 + 2 + 4 + 5) / 4.f, (3 + 4 + 6 + 7) / 4.f,
                   (4 + 5 + 7 + 8) / 4.f},
                  1e-6);
  // Each window gives dy/4 to its four elements; the centre is in all four.
  check_reference("pool2d_backward avg pad 1", got.dx,
                  {1, 3, 2,  4, 10, 6,  3, 7, 4}, 1e-6);
}

TEST_CASE("serial reference: average pooling divides by window^2 and spreads the gradient") {
  Pool2dShape s;
  s.H = 4; s.W = 5; s.window = 2; s.stride = 2;  // the last column is in no window
  std::vector<float> x(20);
  for (int i = 0; i < 20; ++i) x[size_t(i)] = float(i);
  Pooled got = pool(PoolKind::Avg, s, x, {4, 8, 12, 16});
  check_reference("pool2d_forward avg", got.y, {3, 5, 13, 15}, 0.0);
  check_reference("pool2d_backward avg", got.dx,
                  {1, 1, 2, 2, 0,  1, 1, 2, 2, 0,  3, 3, 4, 4, 0,  3, 3, 4, 4, 0}, 0.0);
  s.H = 3; s.W = 4; s.window = 3; s.stride = 1;  // two windows sharing two columns
  x.resize(12);
  got = pool(PoolKind::Avg, s, x, {9, 18});
  check_reference("pool2d_forward avg, overlapping", got.y, {5, 6}, 1e-6);  // 1/9 rounds
  check_reference("pool2d_backward avg, overlapping", got.dx,
                  {1, 3, 3, 2,  1, 3, 3, 2,  1, 3, 3, 2}, 1e-6);
}

TEST_CASE("serial reference: gathered batches hold the right images, labels and normalisation") {
  auto be = make_reference();
  // Image i has pixels 40*i + e and label 100 + i: a pixel names its image and a label its pixel.
  const int count = 7, height = 2, width = 3;
  std::vector<uint8_t> images(size_t(count) * height * width);
  std::vector<int32_t> labels(count);
  for (int i = 0; i < count; ++i) {
    labels[size_t(i)] = 100 + i;
    for (int e = 0; e < height * width; ++e) images[size_t(i) * height * width + e] = uint8_t(40 * i + e);
  }
  DeviceArray<uint8_t> images_(*be, images);
  DeviceArray<int32_t> labels_(*be, labels);
  DeviceDataset data;
  data.images = images_.get();
  data.labels = labels_.get();
  data.count = count;
  data.height = height;
  data.width = width;
  data.mean[0] = 0.25f;
  data.inv_std[0] = 2.f;
  const BatchLayout layout{3, 3, 4};  // padded from 2x3 to 3x4
  const int plane = layout.out_h * layout.out_w;
  // The expected batch for these samples: (pixel/255 - mean) * inv_std, in double, and a black
  // pixel (-0.5) outside the image.
  auto want_batch = [&](const std::vector<int>& samples, std::vector<float>& x,
                        std::vector<int32_t>& y) {
    x.clear();
    y.clear();
    for (int i : samples) {
      y.push_back(100 + i);
      for (int r = 0; r < layout.out_h; ++r)
        for (int c = 0; c < layout.out_w; ++c) {
          const double pixel = r < height && c < width ? 40.0 * i + r * width + c : 0.0;
          x.push_back(float((pixel / 255.0 - 0.25) * 2.0));
        }
    }
  };
  DeviceArray<float> x(*be, size_t(layout.batch) * plane);
  DeviceArray<int32_t> y(*be, size_t(layout.batch));
  std::vector<float> want_x;
  std::vector<int32_t> want_y;

  be->gather_batch(data, 4, layout, x.get(), y.get());  // samples 4, 5, 6 in order
  want_batch({4, 5, 6}, want_x, want_y);
  check_reference("gather_batch images from 4", x.download(), want_x, 1e-6);
  CHECK_MESSAGE(y.download() == want_y, "backend " << reference_name()
                                                   << " (the reference): gather_batch labels");

  // Training batches: 2 steps per epoch of 3, seed 5; step 2 is the first of a new shuffle.
  DeviceArray<int32_t> step(*be, std::vector<int32_t>{0});
  std::set<int> first_epoch;
  for (int s = 0; s < 3; ++s) {
    INFO("training step " << s);
    be->gather_train_batch(data, step.get(), 2, 5, layout, x.get(), y.get());
    be->increment(step.get());
    std::vector<int> samples;
    for (int j = 0; j < layout.batch; ++j)
      samples.push_back(int(shuffle_index(uint32_t((s % 2) * layout.batch + j), count,
                                          epoch_seed(5, uint32_t(s / 2)))));
    if (s < 2) first_epoch.insert(samples.begin(), samples.end());
    want_batch(samples, want_x, want_y);
    check_reference("gather_train_batch images", x.download(), want_x, 1e-6);
    CHECK_MESSAGE(y.download() == want_y, "backend " << reference_name()
                                                     << " (the reference): gather_train_batch "
                                                        "labels do not match their images");
  }
  CHECK(first_epoch.size() == 6);  // no sample twice within an epoch
}

TEST_CASE("serial reference: a 3-channel batch holds each channel's plane, normalised its own way") {
  auto be = make_backend(reference_name());
  // 2 samples of 3x1x2, pixel value 10 * (sample * 6 + channel * 2 + column) + 5.
  const int count = 2;
  std::vector<uint8_t> images(size_t(count) * 6);
  for (size_t i = 0; i < images.size(); ++i) images[i] = uint8_t(10 * i + 5);
  DeviceArray<uint8_t> images_(*be, images);
  DeviceArray<int32_t> labels_(*be, std::vector<int32_t>{7, 8});
  DeviceDataset data;
  data.images = images_.get();
  data.labels = labels_.get();
  data.count = count;
  data.channels = 3;
  data.height = 1;
  data.width = 2;
  const float mean[3] = {0.1f, 0.2f, 0.3f}, inv_std[3] = {2.f, 3.f, 4.f};
  for (int c = 0; c < 3; ++c) data.mean[c] = mean[c], data.inv_std[c] = inv_std[c];
  const BatchLayout layout{2, 2, 2};  // each 1x2 plane padded to 2x2
  DeviceArray<float> x(*be, 2 * 3 * 4);
  DeviceArray<int32_t> y(*be, 2);
  be->gather_batch(data, 0, layout, x.get(), y.get());
  std::vector<float> want;
  for (int i = 0; i < count; ++i)
    for (int c = 0; c < 3; ++c)
      for (int e = 0; e < 4; ++e) {  // row 0 holds the image, row 1 is black
        const double pixel = e < 2 ? 10.0 * (i * 6 + c * 2 + e) + 5 : 0.0;
        want.push_back(float((pixel / 255.0 - mean[c]) * inv_std[c]));
      }
  check_reference("gather_batch of 3 channels", x.download(), want, 1e-6);
  CHECK(y.download() == std::vector<int32_t>{7, 8});
}

}  // TEST_SUITE

}  // namespace pcnn::test
