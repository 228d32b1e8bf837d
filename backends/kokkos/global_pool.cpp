// Kokkos global average pooling: one team per plane. On a CPU the team's one thread sums in
// index order (the reference's order); on a GPU the lanes reduce, an order within kSum.
#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"

namespace pcnn {

using namespace kk;

// x (N,C,HW) -> y (N,C)
void KokkosBackend::global_avg_pool_forward(int N, int C, int HW, const float* x, float* y) {
  PCNN_KK_REGION(global_avg_pool_forward);
  const float inv = 1.f / float(HW);
  Kokkos::parallel_for("pcnn::global_avg_pool_forward", row_policy(size_t(N) * C),
                       KOKKOS_LAMBDA(const Member& team) {
    const size_t plane = team.league_rank();
    const float* xi = x + plane * HW;
    float total = 0.f;
    Kokkos::parallel_reduce(Kokkos::ThreadVectorRange(team, HW),
                            [&](int i, float& acc) { acc += xi[i]; }, total);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { y[plane] = total * inv; });
  });
}

// dy (N,C) -> dx (N,C,HW)
void KokkosBackend::global_avg_pool_backward(int N, int C, int HW, const float* dy, float* dx) {
  PCNN_KK_REGION(global_avg_pool_backward);
  const float inv = 1.f / float(HW);
  Kokkos::parallel_for("pcnn::global_avg_pool_backward", row_policy(size_t(N) * C),
                       KOKKOS_LAMBDA(const Member& team) {
    const size_t plane = team.league_rank();
    const float g = dy[plane] * inv;
    float* dxi = dx + plane * HW;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, HW), [&](int i) { dxi[i] = g; });
  });
}

}  // namespace pcnn
