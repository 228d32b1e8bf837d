// The native cuda backend: hand-written kernels (no cuDNN, no cuBLAS), all on one stream the
// backend owns, and whole training steps captured into a CUDA graph and replayed. The class
// only forwards to the launchers in <op>.cuh; the kernel lab calls those same launchers.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_context.hpp"

namespace pcnn {

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(int device);  // throws Unavailable without a usable GPU
  ~CudaBackend() override;

  // The launchers' context (stream, scratch): for the kernel lab.
  cuda::CudaContext& context() { return ctx_; }

  std::string name() const override { return "cuda"; }
  std::string device_name() const override { return ctx_.device_name(); }
  bool is_host_memory() const override { return false; }

  void* allocate(size_t bytes) override;
  void deallocate(void* ptr) override;
  void upload(void* dst, const void* src, size_t bytes) override;
  void download(void* dst, const void* src, size_t bytes) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  void fill(float* dst, float value, size_t n) override;
  void synchronize() override;
  void increment(int32_t* counter) override;

  PCNN_OVERRIDE_REQUIRED_OPS

  PCNN_OVERRIDE(conv2d_fused_forward)
  PCNN_OVERRIDE(conv2d_fused_backward)
  PCNN_OVERRIDE(linear_forward)
  PCNN_OVERRIDE(linear_backward)

  bool supports_graphs() const override { return true; }
  void graph_begin_capture() override;
  void graph_end_capture() override;
  void graph_launch() override;

 private:
  cuda::CudaContext ctx_;
  cudaGraphExec_t graph_ = nullptr;
};

}  // namespace pcnn
