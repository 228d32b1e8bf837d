// Kokkos batch gathering: one team per sample, which finds the sample once and writes its pixels.
#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/batch_math.hpp"

namespace pcnn {

namespace kk {

// x (batch,C,out_h,out_w), y (batch) from dataset samples sample_of(j), j < batch. sample_of
// runs once per sample, on the device.
template <class SampleOf>
void gather_samples(const char* label, const DeviceDataset& data, const BatchLayout& layout,
                    const SampleOf& sample_of, float* x, int32_t* y) {
  const DeviceDataset d = data;
  const BatchLayout l = layout;
  const int pixels = batch_sample_size(d, l);
  Kokkos::parallel_for(label, team_policy(l.batch, row_team_size()),
                       KOKKOS_LAMBDA(const Member& team) {
    const int j = team.league_rank();
    const uint32_t src = sample_of(j);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, pixels), [&](int e) {
      x[size_t(j) * pixels + e] = batch_pixel(d, l, src, e);
    });
    Kokkos::single(Kokkos::PerTeam(team), [&]() { y[j] = d.labels[src]; });
  });
}

}  // namespace kk

// dataset (count,C,height,width) uint8 -> x (batch,C,out_h,out_w), y (batch); batch *step % spe of
// epoch *step / spe, in the shuffled order of core/shuffle.hpp
void KokkosBackend::gather_train_batch(const DeviceDataset& data, const int32_t* step,
                                       int steps_per_epoch, uint32_t seed,
                                       const BatchLayout& layout, float* x, int32_t* y) {
  PCNN_KK_REGION(gather_train_batch);
  const int batch = layout.batch;
  const uint32_t count = data.count;
  kk::gather_samples("pcnn::gather_train_batch", data, layout, KOKKOS_LAMBDA(int j) -> uint32_t {
    const TrainBatchPosition pos = train_batch_position(*step, steps_per_epoch, batch, seed);
    return shuffle_index(pos.first + j, count, pos.key);
  }, x, y);
}

// samples first .. first+batch-1 in order -> x (batch,C,out_h,out_w), y (batch)
void KokkosBackend::gather_batch(const DeviceDataset& data, int first, const BatchLayout& layout,
                                 float* x, int32_t* y) {
  PCNN_KK_REGION(gather_batch);
  kk::gather_samples("pcnn::gather_batch", data, layout,
                     KOKKOS_LAMBDA(int j) -> uint32_t { return uint32_t(first + j); }, x, y);
}

}  // namespace pcnn
