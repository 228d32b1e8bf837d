// Small generated image sets for tests: each class is a bright bar at its own place plus noise,
// so a network can learn it in a few steps and a broken backward pass cannot.
#pragma once

#include <algorithm>

#include "core/rng.hpp"
#include "data/dataset.hpp"

namespace pcnn::test {

// What the tests train these pictures with (their pixels lie in [0, 1]).
inline const Normalization kSyntheticNorm{0.2f, 3.f};

inline Dataset synthetic_dataset(int count, int height, int width, uint64_t seed) {
  Dataset d;
  d.count = count; d.height = height; d.width = width;
  d.images.resize(size_t(count) * height * width);
  d.labels.resize(count);
  Rng rng(seed);
  for (int i = 0; i < count; ++i) {
    const int label = int(rng.next_u64() % 10);
    d.labels[i] = label;
    uint8_t* img = &d.images[size_t(i) * height * width];
    for (int p = 0; p < height * width; ++p) img[p] = uint8_t(rng.next_u64() % 60);
    // Class c: a vertical bar for c < 5, a horizontal one otherwise, at a class-given offset
    // (images under 3x3 are noise alone: the bar would not fit).
    if (std::min(height, width) < 3) continue;
    const int pos = 2 + (label % 5) * (std::min(height, width) - 4) / 5;
    for (int t = 0; t < std::min(height, width); ++t) {
      const int r = label < 5 ? t : pos, c = label < 5 ? pos : t;
      img[r * width + c] = 255;
      if (c + 1 < width && label < 5) img[r * width + c + 1] = 230;
      if (r + 1 < height && label >= 5) img[(r + 1) * width + c] = 230;
    }
  }
  return d;
}

}  // namespace pcnn::test

namespace pcnn::test {

// synthetic_dataset's pictures repeated in `channels` planes: images of any input shape.
inline Dataset synthetic_planes(int count, int channels, int height, int width, uint64_t seed) {
  Dataset grey = synthetic_dataset(count, height, width, seed);
  if (channels == 1) return grey;
  Dataset d;
  d.count = count;
  d.channels = channels;
  d.height = height;
  d.width = width;
  d.labels = grey.labels;
  const size_t plane = size_t(height) * width;
  d.images.resize(size_t(count) * channels * plane);
  for (int i = 0; i < count; ++i)
    for (int ch = 0; ch < channels; ++ch)
      std::copy_n(&grey.images[size_t(i) * plane], plane,
                  &d.images[(size_t(i) * channels + ch) * plane]);
  return d;
}

// The colour version, 3 x side x side: class c draws synthetic_dataset's bar of class c in the
// red channel for c < 5 and in green and blue otherwise; the rest of every channel is noise.
inline Dataset synthetic_rgb_dataset(int count, int side, uint64_t seed) {
  const Dataset grey = synthetic_dataset(count, side, side, seed);
  Dataset d;
  d.count = count;
  d.channels = 3;
  d.height = d.width = side;
  d.labels = grey.labels;
  d.images.resize(size_t(count) * 3 * side * side);
  Rng rng(seed + 1000);
  const size_t plane = size_t(side) * side;
  for (int i = 0; i < count; ++i) {
    const int label = d.labels[size_t(i)];
    const uint8_t* g = &grey.images[size_t(i) * plane];
    for (int ch = 0; ch < 3; ++ch) {
      uint8_t* out = &d.images[(size_t(i) * 3 + ch) * plane];
      const bool lit = (ch == 0) == (label < 5);
      for (size_t p = 0; p < plane; ++p)
        out[p] = lit && g[p] >= 200 ? g[p] : uint8_t(rng.next_u64() % 60);
    }
  }
  return d;
}

}  // namespace pcnn::test
