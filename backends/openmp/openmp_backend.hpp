// The OpenMP backend: multi-core CPU kernels over host memory. Derives from SerialBackend for
// memory management and anything too small to be worth a parallel region.
#pragma once

#include "backends/serial/serial_backend.hpp"

namespace pcnn {

class OpenMPBackend : public SerialBackend {
 public:
  explicit OpenMPBackend(int threads);

  std::string name() const override { return "openmp"; }
  std::string device_name() const override;

 private:
  int threads_;
};

}  // namespace pcnn
