// Kokkos batch normalisation, one source for the host and CUDA spaces: one team per channel
// reduces its M = N*HW values (TeamThreadRange reductions in double, whose order is fixed by the
// team size: the same result every run), then normalises them; inference is element-wise.
#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/batchnorm_math.hpp"

namespace pcnn {

using namespace kk;

namespace {
// Where value j (0 <= j < N*HW) of channel c of an (N,C,HW) tensor lives.
KOKKOS_INLINE_FUNCTION size_t channel_at(int j, int c, int C, int HW) {
  return (size_t(j / HW) * C + c) * HW + size_t(j % HW);
}
}  // namespace

// x (N,C,HW) -> y (N,C,HW), save_mean, save_inv_std (C); running_mean, running_var updated
void KokkosBackend::batchnorm_forward_train(
    int N, int C, int HW, Activation act, float eps, float momentum, const float* x,
    const float* gamma, const float* beta, float* y, float* save_mean, float* save_inv_std,
    float* running_mean, float* running_var) {
  PCNN_KK_REGION(batchnorm_forward_train);
  const int M = N * HW;
  Kokkos::parallel_for("pcnn::batchnorm_forward_train", team_policy(C, row_team_size()),
                       KOKKOS_LAMBDA(const Member& team) {
    const int c = team.league_rank();
    double sum = 0;
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, M), [&](int j, double& acc) {
      acc += x[channel_at(j, c, C, HW)];
    }, sum);
    const float mean = float(sum / M);
    double squares = 0;
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, M), [&](int j, double& acc) {
      const double d = double(x[channel_at(j, c, C, HW)]) - mean;
      acc += d * d;
    }, squares);
    const float var = float(squares / M);
    const float inv_std = batchnorm_inv_std(var, eps);
    const float g = gamma[c], b = beta[c];
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, M), [&](int j) {
      const size_t at = channel_at(j, c, C, HW);
      y[at] = activate(act, batchnorm_normalize(x[at], mean, inv_std, g, b));
    });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      batchnorm_keep_stats(c, mean, var, inv_std, M, momentum, save_mean, save_inv_std,
                           running_mean, running_var);
    });
  });
}

// x (N,C,HW) -> y (N,C,HW) with the running statistics
void KokkosBackend::batchnorm_forward_infer(
    int N, int C, int HW, Activation act, float eps, const float* x, const float* gamma,
    const float* beta, const float* running_mean, const float* running_var, float* y) {
  PCNN_KK_REGION(batchnorm_forward_infer);
  Kokkos::parallel_for("pcnn::batchnorm_forward_infer", range(size_t(N) * C * HW),
                       KOKKOS_LAMBDA(size_t i) {
    const int c = int((i / size_t(HW)) % size_t(C));
    y[i] = activate(act, batchnorm_normalize(x[i], running_mean[c],
                                             batchnorm_inv_std(running_var[c], eps), gamma[c],
                                             beta[c]));
  });
}

// x, y, dy (N,C,HW) -> dgamma, dbeta (C); dx (N,C,HW) unless nullptr. g: dy through act.
void KokkosBackend::batchnorm_backward(
    int N, int C, int HW, Activation act, const float* x, const float* y, const float* dy,
    const float* gamma, const float* save_mean, const float* save_inv_std, float* dx, float* dgamma,
    float* dbeta) {
  PCNN_KK_REGION(batchnorm_backward);
  const int M = N * HW;
  Kokkos::parallel_for("pcnn::batchnorm_backward", team_policy(C, row_team_size()),
                       KOKKOS_LAMBDA(const Member& team) {
    const int c = team.league_rank();
    const float mean = save_mean[c], inv_std = save_inv_std[c];
    double sum_dy = 0, sum_dy_xhat = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, M),
        [&](int j, double& acc) { acc += activation_grad(act, dy, y, channel_at(j, c, C, HW)); },
        sum_dy);
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, M), [&](int j, double& acc) {
      const size_t at = channel_at(j, c, C, HW);
      acc += double(activation_grad(act, dy, y, at)) * ((x[at] - mean) * inv_std);
    }, sum_dy_xhat);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      dgamma[c] = float(sum_dy_xhat);
      dbeta[c] = float(sum_dy);
    });
    if (dx == nullptr) return;
    const float mean_dy = float(sum_dy / M), mean_dy_xhat = float(sum_dy_xhat / M);
    const float g = gamma[c];
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, M), [&](int j) {
      const size_t at = channel_at(j, c, C, HW);
      dx[at] = batchnorm_input_grad(activation_grad(act, dy, y, at), (x[at] - mean) * inv_std,
                                    mean_dy, mean_dy_xhat, g, inv_std);
    });
  });
}

}  // namespace pcnn
