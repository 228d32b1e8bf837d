// How the openmp kernels split work: balanced contiguous shares, and the tuning constants.
#pragma once

#include <algorithm>
#include <cstddef>

namespace pcnn::omp {

// The contiguous, balanced share of [0, n) that part `part` of `parts` owns (a thread's share,
// or a group's).
template <class I>
struct Range {
  I begin, end;
};
template <class I>
inline Range<I> share(I n, int parts, int part) {
  const I base = n / I(parts), extra = n % I(parts), t = I(part);
  const I begin = t * base + std::min(t, extra);
  return {begin, begin + base + (t < extra ? I(1) : I(0))};
}

// Memory-bound kernels wake one thread per this many elements, at most the whole team: waking
// more costs more than their share of the loop (measured on 16 cores: SGD over 62k parameters
// was slower on 16 threads than on 1).
constexpr size_t kElemsPerThread = 16384;
inline int team_for(size_t n, int threads) {
  return int(std::min<size_t>(size_t(threads), std::max<size_t>(1, n / kElemsPerThread)));
}

// GEMMs below this many multiply-adds run on the calling thread.
constexpr double kMinParallelMacs = 32768;

}  // namespace pcnn::omp
