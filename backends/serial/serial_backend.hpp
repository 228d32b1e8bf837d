// The sequential reference backend: plain loops over host memory, the ground truth of every test.
// Not naive: convolutions are im2col + a packed, blocked GEMM.
#pragma once

#include <vector>

#include "backends/backend.hpp"

namespace pcnn {

class SerialBackend : public Backend {
 public:
  std::string name() const override { return "serial"; }
  std::string device_name() const override { return "1 CPU thread"; }
  bool is_host_memory() const override { return true; }

  PCNN_OVERRIDE_MEMORY_OPS

  PCNN_OVERRIDE_REQUIRED_OPS

 private:
  std::vector<float> col_;  // im2col scratch, grown on demand
};

}  // namespace pcnn
