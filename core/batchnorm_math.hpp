// Batch normalisation's per-element and per-channel formulas, shared by every backend's kernels
// (Ioffe & Szegedy 2015; running statistics as PyTorch keeps them). A channel's statistics are
// over M = N*HW values; the backends differ only in how they sum, never in these formulas.
#pragma once

#include <cmath>
#include <cstddef>

#include "core/activation_math.hpp"
#include "core/host_device.hpp"

namespace pcnn {

// 1 / sqrt(var + eps), var the biased batch variance (or the running one at inference).
PCNN_HD inline float batchnorm_inv_std(float var, float eps) { return 1.f / sqrtf(var + eps); }

// y = gamma * (x - mean) * inv_std + beta
PCNN_HD inline float batchnorm_normalize(float x, float mean, float inv_std, float gamma,
                                         float beta) {
  return gamma * ((x - mean) * inv_std) + beta;
}

// running = (1 - m) * running + m * batch (PyTorch's momentum convention).
PCNN_HD inline float batchnorm_running(float running, float batch, float momentum) {
  return (1.f - momentum) * running + momentum * batch;
}

// The running variance takes the unbiased batch variance, var * M / (M - 1), as PyTorch does;
// one value per channel (M == 1) has no spread to correct, so its variance (0) is kept as is.
PCNN_HD inline float batchnorm_unbiased(float biased_var, long long M) {
  return M > 1 ? biased_var * (float(M) / float(M - 1)) : biased_var;
}

// dx = gamma * inv_std * (dy - sum_dy / M - xhat * sum_dy_xhat / M), xhat = (x - mean) * inv_std:
// the gradient through the batch mean and variance as well as through the element itself.
PCNN_HD inline float batchnorm_input_grad(float dy, float xhat, float mean_dy, float mean_dy_xhat,
                                          float gamma, float inv_std) {
  return gamma * inv_std * (dy - mean_dy - xhat * mean_dy_xhat);
}

// A trained channel's statistics kept: mean and inv_std saved for the backward, and the running
// averages moved towards the batch's (the variance unbiased). One writer per channel.
PCNN_HD inline void batchnorm_keep_stats(int c, float mean, float var, float inv_std, long long M,
                                         float momentum, float* save_mean, float* save_inv_std,
                                         float* running_mean, float* running_var) {
  save_mean[c] = mean;
  save_inv_std[c] = inv_std;
  running_mean[c] = batchnorm_running(running_mean[c], mean, momentum);
  running_var[c] = batchnorm_running(running_var[c], batchnorm_unbiased(var, M), momentum);
}

}  // namespace pcnn
