// Where a training batch comes from and how one pixel is normalised: shared by every backend's
// gather kernel, so all of them feed the network the same numbers.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/contract_types.hpp"
#include "core/host_device.hpp"
#include "core/shuffle.hpp"

namespace pcnn {

struct TrainBatchPosition {
  uint32_t first;  // shuffled position of the batch's first sample
  uint32_t key;    // shuffle key of its epoch
};

PCNN_HD inline TrainBatchPosition train_batch_position(int32_t step, int steps_per_epoch,
                                                       int batch, uint32_t seed) {
  const uint32_t epoch = uint32_t(step / steps_per_epoch);
  return {uint32_t(step % steps_per_epoch) * uint32_t(batch), epoch_seed(seed, epoch)};
}

// One pixel normalised with its channel's mean and 1/std. An explicit fma: host and device
// compilers would otherwise contract this differently.
PCNN_HD inline float normalised_pixel(float pixel, float mean, float inv_std) {
  return fmaf(pixel, 1.f / 255.f, -mean) * inv_std;
}

// Element e (row-major in channels x out_h x out_w) of sample `index`: the image at the top-left
// of each plane, the rest the value of a black pixel.
PCNN_HD inline float batch_pixel(const DeviceDataset& d, const BatchLayout& l, uint32_t index,
                                 int e) {
  const int plane = l.out_h * l.out_w;
  const int ch = e / plane, rc = e % plane;
  const int r = rc / l.out_w, c = rc % l.out_w;
  const float pixel =
      (r < d.height && c < d.width)
          ? float(d.images[((size_t(index) * d.channels + ch) * d.height + r) * d.width + c])
          : 0.f;
  return normalised_pixel(pixel, d.mean[ch], d.inv_std[ch]);
}

// Whether a sample is stored exactly as the batch lays it out (no border to fill) in planes of
// whole 4-byte words, so that a gather may move it four pixels a load.
PCNN_HD inline bool batch_copies_by_words(const DeviceDataset& d, const BatchLayout& l) {
  return l.out_h == d.height && l.out_w == d.width && (l.out_h * l.out_w) % 4 == 0;
}

// Floats per sample of a batch: channels x out_h x out_w.
PCNN_HD inline int batch_sample_size(const DeviceDataset& d, const BatchLayout& l) {
  return d.channels * l.out_h * l.out_w;
}

}  // namespace pcnn
