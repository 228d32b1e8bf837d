// OpenMP backend: identity, thread count, parallel fill / copy, and the factory for the
// registry.
#include "backends/openmp/openmp_backend.hpp"

#include <omp.h>

#include <cstring>
#include <memory>

#include "backends/openmp/parallel.hpp"
#include "backends/registry.hpp"
#include "core/check.hpp"

namespace pcnn {

OpenMPBackend::OpenMPBackend(int threads)
    : threads_(threads > 0 ? threads : omp_get_max_threads()) {
  PCNN_CHECK(threads >= 0, "openmp backend: thread count must be >= 0, got " << threads);
  scratch_.resize(size_t(threads_));
}

std::string OpenMPBackend::device_name() const {
  return "OpenMP, " + std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads") +
         ", " + omp::wait_policy();
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
