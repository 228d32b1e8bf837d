// The per-parameter update rules of SGD (momentum, L2 weight decay) and Adam, written once for
// every backend's kernel. Hyper-parameters come from a device array (see backend.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/contract_types.hpp"
#include "core/host_device.hpp"

namespace pcnn {

// skip: check_step found the step not finite; the kernels then change nothing.
// unscale: 1 / the loss scale the gradients carry (exactly 1 unless activations are fp16).
struct SgdHyper {
  float lr, momentum, weight_decay, unscale;
  bool skip;
  PCNN_HD static SgdHyper from(const float* h) {
    return {h[kHyperLr], h[kHyperMomentum], h[kHyperWeightDecay], h[kHyperGradUnscale],
            h[kHyperSkip] != 0.f};
  }
};

PCNN_HD inline void sgd_step(const SgdHyper& h, float& p, float g, float& v) {
  v = h.momentum * v + (g * h.unscale + h.weight_decay * p);
  p -= h.lr * v;
}

struct AdamHyper {
  float lr, weight_decay, beta1, beta2, eps, correction1, correction2, unscale;
  bool skip;
  // t = step + 1; corrections are 1/(1 - beta^t).
  PCNN_HD static AdamHyper from(const float* h, int32_t step) {
    const float t = float(step + 1);
    const float beta1 = h[kHyperBeta1], beta2 = h[kHyperBeta2];
    return {h[kHyperLr], h[kHyperWeightDecay], beta1, beta2, h[kHyperEps],
            1.f / (1.f - powf(beta1, t)), 1.f / (1.f - powf(beta2, t)), h[kHyperGradUnscale],
            h[kHyperSkip] != 0.f};
  }
};

PCNN_HD inline void adam_step(const AdamHyper& h, float& p, float g, float& m, float& v) {
  g = g * h.unscale + h.weight_decay * p;
  m = h.beta1 * m + (1.f - h.beta1) * g;
  v = h.beta2 * v + (1.f - h.beta2) * g * g;
  p -= h.lr * (m * h.correction1) / (sqrtf(v * h.correction2) + h.eps);
}

}  // namespace pcnn
