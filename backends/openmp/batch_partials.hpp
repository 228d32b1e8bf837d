// Batch sums (weight and bias gradients) that come out the same whatever the thread count: the
// batch is cut into a fixed number of groups of consecutive images (depending on N alone), each
// group sums its images in order into its own slot, and the slots are added in group order.
// Threads take groups cyclically (group g goes to thread g % nt): the larger groups come first,
// so that spreads the images evenly.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace pcnn::omp {

class GroupPartials {
 public:
  // 48 groups divide evenly among 1, 2, 3, 4, 6, 8, 12, 16, 24 or 48 threads.
  static constexpr int kMaxGroups = 48;

  // Calling thread, before the parallel region: N images, sums of width floats each.
  void prepare(int N, size_t width) {
    groups_ = std::max(1, std::min(N, kMaxGroups));
    stride_ = (width + 15) / 16 * 16;  // whole cache lines: groups of two threads never share one
    if (slots_.size() < size_t(groups_) * stride_) slots_.resize(size_t(groups_) * stride_);
  }
  int groups() const { return groups_; }
  float* slot(int g) { return slots_.data() + size_t(g) * stride_; }

  // Every thread, after a barrier: out[i] = sum over groups, in order, of slot(g)[offset + i],
  // for this thread's share of i in [0, n); overwrites out.
  void reduce(int tid, int nt, size_t offset, size_t n, float* out) const {
    const size_t per = (n + size_t(nt) - 1) / size_t(nt);
    const size_t begin = std::min(n, per * size_t(tid)), end = std::min(n, begin + per);
    // Group by group over the whole share (vectorises); each element still adds g = 0, 1, ...
    const float* first = slots_.data() + offset;
    for (size_t i = begin; i < end; ++i) out[i] = first[i];
    for (int g = 1; g < groups_; ++g) {
      const float* part = slots_.data() + size_t(g) * stride_ + offset;
      for (size_t i = begin; i < end; ++i) out[i] += part[i];
    }
  }

 private:
  int groups_ = 1;
  size_t stride_ = 0;
  std::vector<float> slots_;
};

}  // namespace pcnn::omp
