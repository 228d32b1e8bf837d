// The check of a training step for numerical faults (the check_step op of core/op_list.hpp),
// written once for every backend: what a finite or a faulty step does to the metrics and to
// hyper[kHyperSkip], and how a 32-bit count sits exactly in two float metric slots.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/contract_types.hpp"
#include "core/host_device.hpp"
#include "core/precision.hpp"

namespace pcnn {

// No non-finite gradient: the reductions' identity for "lowest faulty index".
constexpr uint32_t kAllFinite = 0xffffffffu;

// Exponent bits all set: Inf or NaN. Read from the bits, so -ffast-math cannot fold it away.
PCNN_HD inline bool is_finite_float(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits & 0x7f800000u) != 0x7f800000u;
}

// Floats hold integers exactly up to 2^24 only: v is kept as its high and low 16 bits.
PCNN_HD inline void pack_u32(uint32_t v, float* two) {
  two[0] = float(v >> 16);
  two[1] = float(v & 0xffffu);
}
PCNN_HD inline uint32_t unpack_u32(const float* two) {
  return (uint32_t(two[0]) << 16) | uint32_t(two[1]);
}

// The loss scale (core/contract_types.hpp): the update divides by the scale this step's
// gradients carry; a dynamic scale then moves for the next step.
PCNN_HD inline void update_loss_scale(bool finite, float* hyper) {
  const float scale = hyper[kHyperLossScale];
  hyper[kHyperGradUnscale] = 1.f / scale;  // a power of two: exact
  if (!(hyper[kHyperScaleInterval] > 0.f)) return;  // static
  if (!finite) {
    hyper[kHyperLossScale] = scale * 0.5f < kMinLossScale ? kMinLossScale : scale * 0.5f;
    hyper[kHyperScaleGoodSteps] = 0.f;
  } else if (hyper[kHyperScaleGoodSteps] + 1.f >= hyper[kHyperScaleInterval]) {
    hyper[kHyperLossScale] = scale * 2.f > kMaxLossScale ? kMaxLossScale : scale * 2.f;
    hyper[kHyperScaleGoodSteps] = 0.f;
  } else {
    hyper[kHyperScaleGoodSteps] += 1.f;
  }
}

// After the gradients are known: first_bad is the lowest index of a non-finite gradient, or
// kAllFinite. A finite step (gradients and the step's loss) adds the step's slots to the
// epoch's and clears hyper[kHyperSkip]; a faulty one sets it, counts the step and, when no
// fault is recorded yet, records step + 1 and first_bad + 1 (0: only the loss was not
// finite). The step slots are zeroed either way, ready for the next step's loss. The loss
// scale moves first (update_loss_scale).
PCNN_HD inline void finish_step_check(uint32_t first_bad, int32_t step, float* metrics,
                                      float* hyper) {
  const bool finite = first_bad == kAllFinite && is_finite_float(metrics[kMetricStepLoss]);
  update_loss_scale(finite, hyper);
  if (finite) {
    metrics[kMetricLossSum] += metrics[kMetricStepLoss];
    metrics[kMetricCorrect] += metrics[kMetricStepCorrect];
    hyper[kHyperSkip] = 0.f;
  } else {
    hyper[kHyperSkip] = 1.f;
    metrics[kMetricBadSteps] += 1.f;
    if (unpack_u32(metrics + kMetricFirstBadStep) == 0) {
      pack_u32(uint32_t(step) + 1u, metrics + kMetricFirstBadStep);
      pack_u32(first_bad == kAllFinite ? 0u : first_bad + 1u, metrics + kMetricFirstBadGrad);
    }
  }
  metrics[kMetricStepLoss] = 0.f;
  metrics[kMetricStepCorrect] = 0.f;
}

}  // namespace pcnn
