// OpenMP backend: identity, thread count, and its factory for the registry.
#include "backends/openmp/openmp_backend.hpp"

#include <omp.h>

#include <memory>

#include "backends/registry.hpp"

namespace pcnn {

OpenMPBackend::OpenMPBackend(int threads)
    : threads_(threads > 0 ? threads : omp_get_max_threads()) {}

std::string OpenMPBackend::device_name() const {
  return "OpenMP, " + std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads");
}

std::unique_ptr<Backend> create_openmp_backend(const BackendOptions& opts) {
  return std::make_unique<OpenMPBackend>(opts.threads);
}

}  // namespace pcnn
