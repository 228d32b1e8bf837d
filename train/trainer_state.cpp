// Taking the training state off the devices and putting it back (checkpoints). Replicas hold
// identical parameters and optimizer state, so replica 0's are saved and every replica gets
// them back; each replica's data counter is put back at its own rank's position. Non-trained
// state (batchnorm running statistics) is not all-reduced: each replica's follows its own share
// of the batch, and replica 0's is saved and given to every replica.
#include <algorithm>

#include "core/check.hpp"
#include "core/step_check_math.hpp"
#include "train/replica.hpp"

namespace pcnn {

TrainingState Trainer::state() const {
  const Replica& r0 = *replicas_[0];
  const int R = replicas();
  TrainingState s;
  // The device's own counter, not the host's count: it is what the next gather will read.
  const int64_t counter = r0.data_counter.download()[0];
  PCNN_CHECK(counter == global_step_ * R,
             "the device's data counter (" << counter << ") is not at step " << global_step_);
  s.global_step = global_step_;
  s.params = r0.model.get_params();
  s.state = r0.model.get_state();
  s.moment1 = r0.optimizer.moment1();
  s.moment2 = r0.optimizer.moment2();
  if (r0.model.precision() == Precision::F16) s.loss_scale = r0.optimizer.loss_scale_state();
  for (const auto& r : replicas_) {
    const std::vector<float> m = r->metrics.download();
    s.metrics.insert(s.metrics.end(), m.begin(), m.end());
  }
  return s;
}

void Trainer::restore(const TrainingState& s) {
  const int R = replicas();
  PCNN_CHECK(steps_done_ == 0, "a training state is restored before the first step only");
  PCNN_CHECK(s.global_step >= 0 && (s.global_step + 1) * R <= INT32_MAX,
             "step " << s.global_step << " is outside the device counter's range");
  PCNN_CHECK(s.metrics.size() == size_t(R) * kMetricCount,
             "the state has metrics of " << s.metrics.size() / kMetricCount << " replicas, this "
                                         << "trainer has " << R);
  // Faults the state's run already counted (and reported at a read-back, or stopped for) are not
  // reported again; their record is cleared so that a new fault gets its own.
  std::vector<float> metrics = s.metrics;
  faults_reported_ = int64_t(metrics[kMetricBadSteps]);
  for (int i = 0; i < R; ++i) {
    float* m = metrics.data() + size_t(i) * kMetricCount;
    pack_u32(0, m + kMetricFirstBadStep);
    pack_u32(0, m + kMetricFirstBadGrad);
  }
  for (int i = 0; i < R; ++i) {
    Replica& r = *replicas_[size_t(i)];
    r.model.set_params(s.params);
    if (!s.state.empty()) r.model.set_state(s.state);
    r.optimizer.set_moments(s.moment1, s.moment2);
    if (!s.loss_scale.empty()) r.optimizer.set_loss_scale_state(s.loss_scale);
    r.metrics.upload(std::vector<float>(metrics.begin() + i * kMetricCount,
                                        metrics.begin() + (i + 1) * kMetricCount));
    r.data_counter.upload({int32_t(s.global_step * R + i)});
    if (r.update_counter.get()) r.update_counter.upload({int32_t(s.global_step)});
  }
  synchronize();  // the uploads above read host vectors that end here
  global_step_ = s.global_step;
  restored_ = true;
}

}  // namespace pcnn
