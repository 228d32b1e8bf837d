// Kokkos bias and activation kernels. The bias gradient gives each channel to one team (on a GPU
// several, summed in order by a second kernel), which reduces in a fixed order: no atomics, the
// same result every run.
#include <algorithm>

#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/activation_math.hpp"

namespace pcnn {

using namespace kk;

// y (N,C,HW) += b (C)
void KokkosBackend::bias_add(int N, int C, int HW, const float* b, float* y) {
  PCNN_KK_REGION(bias_add);
  Kokkos::parallel_for("pcnn::bias_add", row_policy(size_t(N) * C),
                       KOKKOS_LAMBDA(const Member& team) {
    const int row = team.league_rank();
    const float bias = b[row % C];
    float* out = y + size_t(row) * HW;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, HW), [&](int i) { out[i] += bias; });
  });
}

namespace {

// On a GPU, C teams leave most of it idle (LeNet-5's first layer: 6 teams, 0.56 ms at batch
// 1024 on an H200): each channel's images are shared out over `chunks` teams, whose partial sums
// a second kernel adds in chunk order (deterministic). Chunks for ~4 teams per SM in all, each
// with at least ~2048 values.
int bias_chunks(int N, int C, int HW) {
  if (kOnHost || C <= 0) return 1;
  const long long wanted = (std::max(1, ExecSpace().concurrency() / 256) + C - 1) / C;
  const long long by_work = (static_cast<long long>(N) * HW) / 2048;
  return int(std::max(1LL, std::min({wanted, by_work, static_cast<long long>(N)})));
}

void bias_grad_split(int N, int C, int HW, const float* dy, float* db, float* partial,
                     int chunks) {
  Kokkos::parallel_for("pcnn::bias_backward[split]", team_policy(C * chunks, row_team_size()),
                       KOKKOS_LAMBDA(const Member& team) {
    const int t = team.league_rank(), c = t / chunks, k = t % chunks;
    const int n0 = int(static_cast<long long>(N) * k / chunks);
    const int n1 = int(static_cast<long long>(N) * (k + 1) / chunks);
    float total = 0.f;
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, (n1 - n0) * HW), [&](int j, float& acc) {
      const int n = n0 + j / HW;
      acc += dy[(size_t(n) * C + c) * HW + (j - (j / HW) * HW)];
    }, total);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { partial[t] = total; });
  });
  Kokkos::parallel_for("pcnn::bias_backward[sum]", range(size_t(C)), KOKKOS_LAMBDA(size_t c) {
    float acc = 0.f;
    for (int k = 0; k < chunks; ++k) acc += partial[c * chunks + k];
    db[c] = acc;
  });
}

}  // namespace

// dy (N,C,HW) -> db (C) = sum over n and hw; one team per channel (on a GPU, several)
void KokkosBackend::bias_backward(int N, int C, int HW, const float* dy, float* db) {
  PCNN_KK_REGION(bias_backward);
  if (const int chunks = bias_chunks(N, C, HW); chunks > 1) {
    bias_grad_split(N, C, HW, dy, db, workspace(kPartials, size_t(C) * chunks), chunks);
    return;
  }
  Kokkos::parallel_for("pcnn::bias_backward", team_policy(C, row_team_size()),
                       KOKKOS_LAMBDA(const Member& team) {
    const int c = team.league_rank();
    // Captures are first used out here: nvcc rejects a lambda's first capture inside if constexpr.
    const float* const data = dy;
    const int images = N, channels = C, len = HW;
    float total = 0.f;
    if constexpr (kOnHost) {
      // One thread per channel: kLanes interleaved partial sums (so the loop vectorises), added
      // in lane order at the end. Fixed order, so the same result every run.
      constexpr int kLanes = 16;
      float lane[kLanes] = {};
      for (int n = 0; n < images; ++n) {
        const float* row = data + (size_t(n) * channels + c) * len;
        int i = 0;
        for (; i + kLanes <= len; i += kLanes)
          for (int l = 0; l < kLanes; ++l) lane[l] += row[i + l];
        for (int l = 0; i + l < len; ++l) lane[l] += row[i + l];
      }
      for (int l = 0; l < kLanes; ++l) total += lane[l];
    } else {
      Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, images), [&](int n, float& acc) {
        const float* row = data + (size_t(n) * channels + c) * len;
        float sum = 0.f;
        for (int i = 0; i < len; ++i) sum += row[i];
        acc += sum;
      }, total);
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() { db[c] = total; });
  });
}

namespace {
// One kernel per activation (dispatch_activation below picks it), so the formula folds into the
// loop. Free templates: nvcc wants a named enclosing function around a Kokkos device lambda.
template <Activation A>
void activation_forward_kernel(size_t n, const float* x, float* y) {
  Kokkos::parallel_for("pcnn::activation_forward", range(n), KOKKOS_LAMBDA(size_t i) {
    y[i] = activate<A>(x[i]);
  });
}

template <Activation A>
void activation_backward_kernel(size_t n, const float* y, const float* dy, float* dx) {
  Kokkos::parallel_for("pcnn::activation_backward", range(n), KOKKOS_LAMBDA(size_t i) {
    dx[i] = dy[i] * activation_derivative<A>(y[i]);
  });
}
}  // namespace

// y[i] = act(x[i]), n elements; x == y allowed
void KokkosBackend::activation_forward(Activation act, size_t n, const float* x, float* y) {
  PCNN_KK_REGION(activation_forward);
  dispatch_activation(act, [&](auto tag) {
    activation_forward_kernel<decltype(tag)::value>(n, x, y);
  });
}

// dx[i] = dy[i] * act'(y[i]); dy == dx allowed
void KokkosBackend::activation_backward(Activation act, size_t n, const float* y,
                                        const float* dy, float* dx) {
  PCNN_KK_REGION(activation_backward);
  dispatch_activation(act, [&](auto tag) {
    activation_backward_kernel<decltype(tag)::value>(n, y, dy, dx);
  });
}

}  // namespace pcnn
