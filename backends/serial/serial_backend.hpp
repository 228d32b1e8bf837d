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

  void* allocate(size_t bytes) override;
  void deallocate(void* ptr) override;
  void upload(void* dst, const void* src, size_t bytes) override;
  void download(void* dst, const void* src, size_t bytes) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  void fill(float* dst, float value, size_t n) override;
  void synchronize() override {}
  void increment(int32_t* counter) override { ++*counter; }

  PCNN_OVERRIDE_REQUIRED_OPS

 private:
  std::vector<float> col_;  // im2col scratch, grown on demand
};

}  // namespace pcnn
