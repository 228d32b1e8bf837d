// How the openmp kernels split work: balanced contiguous shares, and the tuning constants.
#pragma once

#include <omp.h>

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

// f(begin, end) on each thread's share of [0, n), on a team of `team` threads (the calling
// thread alone when team <= 1). f runs a plain loop over its share, which GCC vectorises like
// serial's (an `omp parallel for simd` update it kept scalar: notes/tuning-openmp.md).
template <class F>
void for_shares(size_t n, int team, F&& f) {
  // One thread: no region at all (an inactive one still cost 3 us of a 3.5 us SGD update).
  if (team <= 1) return f(size_t(0), n);
#pragma omp parallel num_threads(team)
  {
    const auto r = share(n, omp_get_num_threads(), omp_get_thread_num());
    f(r.begin, r.end);
  }
}

// Memory-bound kernels below this many elements run on the calling thread: waking the team
// costs more than the loop. Above it they use the whole team: waking only some of the threads
// (one per 16k elements) was tried and made a 16-thread LeNet-5 step 1.6x slower (libgomp
// re-forms the team whenever its size changes from one region to the next).
constexpr size_t kMinParallel = 8192;
inline int team_for(size_t n, int threads) { return n >= kMinParallel ? threads : 1; }

// GEMMs below this many multiply-adds run on the calling thread.
constexpr double kMinParallelMacs = 32768;

// How the threads wait, for device_name(): passive when other processes were busy as the
// program started, else libgomp's spinning, unless OMP_WAIT_POLICY / GOMP_SPINCOUNT say (see
// wait_policy.cpp).
const char* wait_policy();

// Whether libgomp's threads spin at barriers (its default, or OMP_WAIT_POLICY=active, or a
// non-zero GOMP_SPINCOUNT): then a team larger than the free CPUs is slow.
bool spinning_wait();

}  // namespace pcnn::omp
