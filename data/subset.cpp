// Subsets copy whole images (channels x height x width bytes each) with their labels.
#include "data/subset.hpp"

#include <cmath>
#include <vector>

#include "core/check.hpp"
#include "core/shuffle.hpp"

namespace pcnn {

void keep_first(Dataset& d, int n) {
  if (n <= 0 || n >= d.count) return;
  if (d.cut_from.count == 0) d.cut_from = d.origin();
  d.count = n;
  d.images.resize(size_t(n) * d.image_size());
  d.labels.resize(size_t(n));
}

Dataset split_validation(Dataset& d, double fraction, uint32_t seed) {
  PCNN_CHECK(fraction > 0 && fraction < 1,
             "the validation fraction must lie strictly between 0 and 1, got " << fraction);
  const int held = int(std::lround(fraction * d.count));
  PCNN_CHECK(held >= 1 && held < d.count,
             "a validation fraction of " << fraction << " of " << d.count << " training images "
                                         << "holds out " << held << ", leaving "
                                         << d.count - held << " to train on (each needs 1 or more)");
  // The first `held` positions of a keyed shuffle (the trainer's, with a key of its own) choose.
  if (d.cut_from.count == 0) d.cut_from = d.origin();  // both parts come from it
  std::vector<char> in_val(size_t(d.count), 0);
  const uint32_t key = epoch_seed(seed ^ 0x5EED5A11u, 0xFFFFFFFFu) | 1u;  // never 0: the identity
  for (int i = 0; i < held; ++i) in_val[shuffle_index(uint32_t(i), uint32_t(d.count), key)] = 1;
  Dataset val = d, train = d;
  val.images.clear();
  val.labels.clear();
  train.images.clear();
  train.labels.clear();
  const size_t size = d.image_size();
  for (int i = 0; i < d.count; ++i) {
    Dataset& to = in_val[size_t(i)] ? val : train;
    const auto from = d.images.begin() + std::ptrdiff_t(size_t(i) * size);
    to.images.insert(to.images.end(), from, from + std::ptrdiff_t(size));
    to.labels.push_back(d.labels[size_t(i)]);
  }
  val.count = held;
  train.count = d.count - held;
  d = std::move(train);
  return val;
}

}  // namespace pcnn
