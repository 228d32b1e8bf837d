// Parts of a data set: its first N images (--limit) and a seeded hold-out (--val-split).
#pragma once

#include <cstdint>

#include "data/dataset.hpp"

namespace pcnn {

// Both record in d.cut_from the whole set that the first cut started from.
// Keeps only the first n images of d (n <= 0 or n >= d.count: all of them).
void keep_first(Dataset& d, int n);

// Moves round(fraction * d.count) images of d, chosen by a shuffle keyed by seed, into the set
// returned (the validation set); both keep the images' order. fraction must lie in (0, 1) and
// leave at least one image on each side, else Error.
Dataset split_validation(Dataset& d, double fraction, uint32_t seed);

}  // namespace pcnn
