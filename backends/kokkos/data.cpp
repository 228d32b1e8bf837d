// Kokkos batch gathering: one team per sample, which finds the sample once and writes its pixels.
#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/batch_math.hpp"

namespace pcnn {

using namespace kk;

// dataset (count,height,width) uint8 -> x (batch,1,out_h,out_w), y (batch); batch *step % spe of
// epoch *step / spe, in the shuffled order of core/shuffle.hpp
void KokkosBackend::gather_train_batch(const DeviceDataset& data, const int32_t* step,
                                       int steps_per_epoch, uint32_t seed,
                                       const BatchLayout& layout, float* x, int32_t* y) {
  const DeviceDataset d = data;
  const BatchLayout l = layout;
  const int pixels = l.out_h * l.out_w;
  Kokkos::parallel_for("pcnn::gather_train_batch", TeamPolicy(l.batch, row_team_size()),
                       KOKKOS_LAMBDA(const Member& team) {
    const int j = team.league_rank();
    const TrainBatchPosition pos = train_batch_position(*step, steps_per_epoch, l.batch, seed);
    const uint32_t src = shuffle_index(pos.first + j, d.count, pos.key);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, pixels), [&](int e) {
      x[size_t(j) * pixels + e] = batch_pixel(d, l, src, e);
    });
    Kokkos::single(Kokkos::PerTeam(team), [&]() { y[j] = d.labels[src]; });
  });
}

// samples first .. first+batch-1 in order -> x (batch,1,out_h,out_w), y (batch)
void KokkosBackend::gather_batch(const DeviceDataset& data, int first, const BatchLayout& layout,
                                 float* x, int32_t* y) {
  const DeviceDataset d = data;
  const BatchLayout l = layout;
  const int pixels = l.out_h * l.out_w;
  Kokkos::parallel_for("pcnn::gather_batch", TeamPolicy(l.batch, row_team_size()),
                       KOKKOS_LAMBDA(const Member& team) {
    const int j = team.league_rank();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, pixels), [&](int e) {
      x[size_t(j) * pixels + e] = batch_pixel(d, l, uint32_t(first + j), e);
    });
    Kokkos::single(Kokkos::PerTeam(team), [&]() { y[j] = d.labels[first + j]; });
  });
}

}  // namespace pcnn
