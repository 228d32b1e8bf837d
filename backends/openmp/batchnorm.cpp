// OpenMP batch normalisation: each thread owns whole channels (a static share of C), so every
// channel's sums run on one thread in an order fixed by the shape: per image, 16-lane float
// partial sums of its HW values (reduce.hpp), added up in double in image order. Results do not
// depend on the thread count. Dense inputs (HW == 1) sum one column in sample order.
#include <omp.h>

#include "backends/openmp/openmp_backend.hpp"
#include "backends/openmp/parallel.hpp"
#include "backends/openmp/reduce.hpp"
#include "core/batchnorm_math.hpp"

namespace pcnn {

namespace {
// Sum over channel c of f applied to each of its planes (one plane: HW values of one image).
template <class F>
double channel_sum(int N, int C, int HW, int c, F&& plane_sum) {
  double total = 0;
  for (int n = 0; n < N; ++n) total += plane_sum((size_t(n) * C + c) * size_t(HW));
  return total;
}

// Channels split over the team; tiny layers run on the calling thread.
template <class F>
void for_channels(int threads, int N, int C, int HW, F&& body) {
  const int team = C > 1 ? omp::team_for(size_t(N) * C * HW, threads) : 1;
#pragma omp parallel num_threads(team) if (team > 1)
  {
    const auto ch = omp::share(C, omp_get_num_threads(), omp_get_thread_num());
    for (int c = ch.begin; c < ch.end; ++c) body(c);
  }
}
}  // namespace

// x (N,C,HW) -> y (N,C,HW), save_mean, save_inv_std (C); running_mean, running_var updated
void OpenMPBackend::batchnorm_forward_train(
    int N, int C, int HW, Activation act, float eps, float momentum, const float* x,
    const float* gamma, const float* beta, float* y, float* save_mean, float* save_inv_std,
    float* running_mean, float* running_var) {
  const long long M = (long long)N * HW;
  for_channels(threads_, N, C, HW, [&](int c) {
    const float mean = float(channel_sum(N, C, HW, c, [&](size_t at) {
                               return double(omp::sum_span(x + at, size_t(HW)));
                             }) / double(M));
    const double squares = channel_sum(N, C, HW, c, [&](size_t at) {
      float s = 0.f;
      for (int i = 0; i < HW; ++i) {
        const float d = x[at + i] - mean;
        s += d * d;
      }
      return double(s);
    });
    const float var = float(squares / double(M));
    const float inv_std = batchnorm_inv_std(var, eps);
    const float g = gamma[c], b = beta[c];
    for (int n = 0; n < N; ++n) {
      const size_t at = (size_t(n) * C + c) * HW;
      for (int i = 0; i < HW; ++i)
        y[at + i] = activate(act, batchnorm_normalize(x[at + i], mean, inv_std, g, b));
    }
    batchnorm_keep_stats(c, mean, var, inv_std, M, momentum, save_mean, save_inv_std, running_mean,
                         running_var);
  });
}

// x (N,C,HW) -> y (N,C,HW) with the running statistics: element-wise, rows split over the team
void OpenMPBackend::batchnorm_forward_infer(
    int N, int C, int HW, Activation act, float eps, const float* x, const float* gamma,
    const float* beta, const float* running_mean, const float* running_var, float* y) {
  const int team = omp::team_for(size_t(N) * C * HW, threads_);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int nc = 0; nc < N * C; ++nc) {
    const int c = nc % C;
    const float inv_std = batchnorm_inv_std(running_var[c], eps);
    const size_t at = size_t(nc) * HW;
    for (int i = 0; i < HW; ++i)
      y[at + i] = activate(
          act, batchnorm_normalize(x[at + i], running_mean[c], inv_std, gamma[c], beta[c]));
  }
}

// x, y, dy (N,C,HW) -> dgamma, dbeta (C); dx (N,C,HW) unless nullptr. With an activation the
// gradient through it is formed in each pass (the plain dy keeps the vectorised sum).
void OpenMPBackend::batchnorm_backward(
    int N, int C, int HW, Activation act, const float* x, const float* y, const float* dy,
    const float* gamma, const float* save_mean, const float* save_inv_std, float* dx, float* dgamma,
    float* dbeta) {
  const long long M = (long long)N * HW;
  for_channels(threads_, N, C, HW, [&](int c) {
    const float mean = save_mean[c], inv_std = save_inv_std[c];
    const double sum_dy = channel_sum(N, C, HW, c, [&](size_t at) {
      if (act == Activation::None) return double(omp::sum_span(dy + at, size_t(HW)));
      float s = 0.f;
      for (int i = 0; i < HW; ++i) s += activation_grad(act, dy, y, at + i);
      return double(s);
    });
    const double sum_dy_xhat = channel_sum(N, C, HW, c, [&](size_t at) {
      float s = 0.f;
      for (int i = 0; i < HW; ++i)
        s += activation_grad(act, dy, y, at + i) * ((x[at + i] - mean) * inv_std);
      return double(s);
    });
    dgamma[c] = float(sum_dy_xhat);
    dbeta[c] = float(sum_dy);
    if (!dx) return;
    const float mean_dy = float(sum_dy / double(M)), mean_dy_xhat = float(sum_dy_xhat / double(M));
    const float g = gamma[c];
    for (int n = 0; n < N; ++n) {
      const size_t at = (size_t(n) * C + c) * HW;
      for (int i = 0; i < HW; ++i)
        dx[at + i] =
            batchnorm_input_grad(activation_grad(act, dy, y, at + i), (x[at + i] - mean) * inv_std,
                                 mean_dy, mean_dy_xhat, g, inv_std);
    }
  });
}

}  // namespace pcnn
