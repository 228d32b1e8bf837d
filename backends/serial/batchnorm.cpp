// Serial batch normalisation: the readable reference. Each channel in turn: its mean, then its
// variance as the mean of squared deviations (two passes, no cancellation), both summed in
// double in sample-then-position order; then the normalised output.
#include <vector>

#include "backends/serial/serial_backend.hpp"
#include "core/batchnorm_math.hpp"

namespace pcnn {

namespace {
// The M = N*HW values of channel c of x (N,C,HW), in order, handed to f(value, index).
template <class F>
void for_channel(int N, int C, int HW, int c, F&& f) {
  for (int n = 0; n < N; ++n) {
    const size_t base = (size_t(n) * C + c) * HW;
    for (int i = 0; i < HW; ++i) f(base + i);
  }
}
}  // namespace

// x (N,C,HW) -> y (N,C,HW), save_mean, save_inv_std (C); running_mean, running_var updated
void SerialBackend::batchnorm_forward_train(
    int N, int C, int HW, Activation act, float eps, float momentum, const float* x,
    const float* gamma, const float* beta, float* y, float* save_mean, float* save_inv_std,
    float* running_mean, float* running_var) {
  const long long M = (long long)N * HW;
  for (int c = 0; c < C; ++c) {
    double sum = 0;
    for_channel(N, C, HW, c, [&](size_t i) { sum += x[i]; });
    const float mean = float(sum / double(M));
    double squares = 0;
    for_channel(N, C, HW, c, [&](size_t i) {
      const double d = double(x[i]) - mean;
      squares += d * d;
    });
    const float var = float(squares / double(M));
    const float inv_std = batchnorm_inv_std(var, eps);
    for_channel(N, C, HW, c, [&](size_t i) {
      y[i] = activate(act, batchnorm_normalize(x[i], mean, inv_std, gamma[c], beta[c]));
    });
    batchnorm_keep_stats(c, mean, var, inv_std, M, momentum, save_mean, save_inv_std, running_mean,
                         running_var);
  }
}

// x (N,C,HW) -> y (N,C,HW) with the running statistics
void SerialBackend::batchnorm_forward_infer(
    int N, int C, int HW, Activation act, float eps, const float* x, const float* gamma,
    const float* beta, const float* running_mean, const float* running_var, float* y) {
  for (int c = 0; c < C; ++c) {
    const float inv_std = batchnorm_inv_std(running_var[c], eps);
    for_channel(N, C, HW, c, [&](size_t i) {
      y[i] = activate(act, batchnorm_normalize(x[i], running_mean[c], inv_std, gamma[c], beta[c]));
    });
  }
}

// x, y, dy (N,C,HW) -> dgamma, dbeta (C); dx (N,C,HW) unless nullptr. g: dy through act.
void SerialBackend::batchnorm_backward(
    int N, int C, int HW, Activation act, const float* x, const float* y, const float* dy,
    const float* gamma, const float* save_mean, const float* save_inv_std, float* dx, float* dgamma,
    float* dbeta) {
  const long long M = (long long)N * HW;
  for (int c = 0; c < C; ++c) {
    const float mean = save_mean[c], inv_std = save_inv_std[c];
    double sum_dy = 0, sum_dy_xhat = 0;
    for_channel(N, C, HW, c, [&](size_t i) {
      const float g = activation_grad(act, dy, y, i);
      sum_dy += g;
      sum_dy_xhat += double(g) * ((x[i] - mean) * inv_std);
    });
    dgamma[c] = float(sum_dy_xhat);
    dbeta[c] = float(sum_dy);
    if (!dx) continue;
    const float mean_dy = float(sum_dy / double(M)), mean_dy_xhat = float(sum_dy_xhat / double(M));
    for_channel(N, C, HW, c, [&](size_t i) {
      dx[i] = batchnorm_input_grad(activation_grad(act, dy, y, i), (x[i] - mean) * inv_std, mean_dy,
                                   mean_dy_xhat, gamma[c], inv_std);
    });
  }
}

}  // namespace pcnn
