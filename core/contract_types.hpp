// Value types the backend contract passes besides shapes: where optimizer hyper-parameters and
// loss metrics sit in their device arrays, and how a device-resident data set is described.
#pragma once

#include <cstdint>

namespace pcnn {

// Hyper-parameters the optimizer kernels read from device memory (index into a float[kHyperCount]),
// so a replayed graph sees the learning rate of the current epoch.
enum HyperIndex { kHyperLr = 0, kHyperMomentum, kHyperWeightDecay, kHyperBeta1, kHyperBeta2,
                  kHyperEps, kHyperCount };

// Metric accumulators the loss kernel adds to (index into a float[kMetricCount]).
enum MetricIndex { kMetricLossSum = 0, kMetricCorrect, kMetricCount };

// A data set resident in device memory: images stay uint8, normalised per batch.
struct DeviceDataset {
  const uint8_t* images = nullptr;  // (count, height, width) uint8
  const int32_t* labels = nullptr;  // (count) int32 in [0, classes)
  int count = 0, height = 0, width = 0;
  float mean = 0.f, inv_std = 1.f;  // x = (pixel/255 - mean) * inv_std
};

// Where a batch goes: (batch, 1, out_h, out_w) floats; the image sits at the top-left corner and
// the rest is filled with the normalised value of a black pixel (Simard's 29x29 from 28x28).
struct BatchLayout {
  int batch = 0, out_h = 0, out_w = 0;
};

}  // namespace pcnn
