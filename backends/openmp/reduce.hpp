// Sums of one contiguous span that vectorise: a single running sum is a chain of dependent adds
// (one per 3-4 cycles), so 16 lane-wise partial sums are kept and added in a fixed order at the
// end. The order depends only on n, never on threads, so results are reproducible.
#pragma once

#include <cstddef>

namespace pcnn::omp {

inline float sum_span(const float* x, size_t n) {
  constexpr size_t L = 16;
  float lane[L] = {};
  size_t i = 0;
  for (; i + L <= n; i += L)
    for (size_t j = 0; j < L; ++j) lane[j] += x[i + j];
  for (size_t j = 0; i < n; ++i, ++j) lane[j] += x[i];
  for (size_t width = L / 2; width > 0; width /= 2)  // pairwise, lanes j and j + width
    for (size_t j = 0; j < width; ++j) lane[j] += lane[j + width];
  return lane[0];
}

}  // namespace pcnn::omp
