// OpenMP backend: identity, thread count, parallel fill / copy, and the factory for the
// registry.
#include "backends/openmp/openmp_backend.hpp"

#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "backends/openmp/parallel.hpp"
#include "backends/registry.hpp"
#include "core/check.hpp"

namespace pcnn {

OpenMPBackend::OpenMPBackend(int threads)
    : max_threads_(threads > 0 ? threads : omp_get_max_threads()), threads_(max_threads_) {
  PCNN_CHECK(threads >= 0, "openmp backend: thread count must be >= 0, got " << threads);
  scratch_.resize(size_t(max_threads_));
  // A count asked for (here or in OMP_NUM_THREADS) is kept whatever the load.
  if (threads == 0 && !std::getenv("OMP_NUM_THREADS") && max_threads_ > 1 && omp::spinning_wait()) {
    free_cpus_ = std::make_unique<omp::FreeCpuTracker>(max_threads_);
    follow_free_cpus();
  }
}

std::string OpenMPBackend::device_name() const {
  const std::string n =
      std::to_string(max_threads_) + (max_threads_ == 1 ? " thread" : " threads");
  return "OpenMP, " + (free_cpus_ ? "up to " + n + " (as many as CPUs are free)" : n) + ", " +
         omp::wait_policy();
}

// dst[0..n) = value
void OpenMPBackend::fill(float* dst, float value, size_t n) {
  const int team = omp::team_for(n, threads_);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (size_t i = 0; i < n; ++i) dst[i] = value;
}

// Large copies in one contiguous chunk per thread; overlapping ranges go through memmove alone.
void OpenMPBackend::copy(void* dst, const void* src, size_t bytes) {
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dst);
  const bool overlap = d < s + bytes && s < d + bytes;
  const int team = omp::team_for(bytes / sizeof(float), threads_);
  if (overlap || team == 1) {
    SerialBackend::copy(dst, src, bytes);
    return;
  }
#pragma omp parallel num_threads(team)
  {
    const int nt = omp_get_num_threads(), tid = omp_get_thread_num();
    const size_t chunk = (bytes + size_t(nt) - 1) / size_t(nt);
    const size_t begin = std::min(bytes, chunk * size_t(tid));
    const size_t end = std::min(bytes, begin + chunk);
    if (end > begin) std::memcpy(d + begin, s + begin, end - begin);
  }
}

std::unique_ptr<Backend> create_openmp_backend(const BackendOptions& opts) {
  return std::make_unique<OpenMPBackend>(opts.threads);
}

}  // namespace pcnn
