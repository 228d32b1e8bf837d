// Value types the backend contract passes besides shapes: where optimizer hyper-parameters and
// loss metrics sit in their device arrays, and how a device-resident data set is described.
#pragma once

#include <cstdint>

namespace pcnn {

// Hyper-parameters the optimizer kernels read from device memory (index into a float[kHyperCount]),
// so a replayed graph sees the learning rate of the current epoch. kHyperSkip is written on the
// device by check_step: non-zero leaves the step's update out.
// The loss scale (core/precision.hpp; 1 unless activations are stored in fp16): LossScale
// multiplies the loss gradient before it is stored in 16 bits; check_step copies 1/LossScale
// to GradUnscale, which the optimizers multiply every gradient by, and then, when
// ScaleInterval > 0 (dynamic scaling), halves LossScale after a step that was not finite and
// doubles it after ScaleInterval finite ones in a row (counted in ScaleGoodSteps).
enum HyperIndex { kHyperLr = 0, kHyperMomentum, kHyperWeightDecay, kHyperBeta1, kHyperBeta2,
                  kHyperEps, kHyperSkip, kHyperLossScale, kHyperGradUnscale, kHyperScaleGoodSteps,
                  kHyperScaleInterval, kHyperCount };

// A training run's metrics in device memory (index into a float[kMetricCount]). The loss kernel
// adds to the LossSum and Correct slots of the pointer it is given: the trainer gives it
// metrics + kMetricStepLoss, and check_step moves a finite step's sums into the epoch's.
// FirstBadStep and FirstBadGrad are 32-bit values kept as two floats each (pack_u32 in
// core/step_check_math.hpp): the 1-based global step of the first faulty step (0: none) and
// 1 + the lowest index of a non-finite gradient in it (0: only the loss was not finite).
enum MetricIndex {
  kMetricLossSum = 0, kMetricCorrect,        // the epoch's, over the steps kept
  kMetricStepLoss, kMetricStepCorrect,       // this step's (laid out like the two above)
  kMetricBadSteps,                           // steps skipped because they were not finite
  kMetricFirstBadStep,                       // two floats
  kMetricFirstBadGrad = kMetricFirstBadStep + 2,  // two floats
  kMetricCount = kMetricFirstBadGrad + 2
};

// The most channels a data set's images may have (grey 1, RGB 3): the per-channel normalisation
// travels by value in DeviceDataset, so a CUDA kernel takes it as an argument.
constexpr int kMaxDataChannels = 4;

// A data set resident in device memory: images stay uint8, normalised per batch.
struct DeviceDataset {
  const uint8_t* images = nullptr;  // (count, channels, height, width) uint8
  const int32_t* labels = nullptr;  // (count) int32 in [0, classes)
  int count = 0, height = 0, width = 0;
  int channels = 1;                 // 1 .. kMaxDataChannels
  // x = (pixel/255 - mean[c]) * inv_std[c] for a pixel of channel c
  float mean[kMaxDataChannels] = {0.f, 0.f, 0.f, 0.f};
  float inv_std[kMaxDataChannels] = {1.f, 1.f, 1.f, 1.f};
};

// Where a batch goes: (batch, channels, out_h, out_w) floats, channels those of the data set;
// the image sits at the top-left corner of each plane and the rest is filled with the
// normalised value of a black pixel (Simard's 29x29 from 28x28).
struct BatchLayout {
  int batch = 0, out_h = 0, out_w = 0;
};

}  // namespace pcnn
