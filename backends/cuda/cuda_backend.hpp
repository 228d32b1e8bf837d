// The native cuda backend: hand-written kernels (no cuDNN, no cuBLAS), all on one stream, and
// whole training steps captured into a CUDA graph and replayed. This class is also the GPU base
// of the cudnn backend, which replaces only what the vendor libraries compute.
//
// Each op is defined in its op file (gemm.cu, conv2d_forward.cu, pool2d.cu, ...); ops with
// variants call their launcher (<op>.cuh) with the heuristic plan, the one the kernel lab calls
// with explicit plans. Memory and graph capture are in cuda_backend.cpp, the GPU state (stream,
// graph, scratch) in cuda_context.hpp.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_context.hpp"

namespace pcnn {

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(int device);  // throws Unavailable without a usable GPU

  // The launchers' context (stream, scratch): for derived backends and the kernel lab.
  cuda::CudaContext& context() { return ctx_; }
  const cuda::CudaContext& context() const { return ctx_; }

  std::string name() const override { return "cuda"; }
  std::string device_name() const override { return ctx_.device_name(); }
  bool is_host_memory() const override { return false; }

  PCNN_OVERRIDE_MEMORY_OPS
  int64_t device_memory_in_use() const override;  // cudaMemGetInfo: total - free

  PCNN_OVERRIDE_REQUIRED_OPS

  PCNN_OVERRIDE(conv2d_fused_forward)
  PCNN_OVERRIDE(conv2d_fused_backward)
  PCNN_OVERRIDE(linear_forward)
  PCNN_OVERRIDE(linear_backward)
  // 16-bit activations read and written by the kernels themselves, no conversions: gemm.cu, and
  // conv2d_forward.cu / conv2d_backward.cu (where a shape has no such kernel, the default).
  PCNN_OVERRIDE(conv2d_fused_forward_16)
  PCNN_OVERRIDE(conv2d_fused_backward_16)
  PCNN_OVERRIDE(linear_forward_16)
  PCNN_OVERRIDE(linear_backward_16)
  PCNN_OVERRIDE(softmax_cross_entropy_16)
  // So no layer stages for them: the convolutions' composed fallback stages in the context.
  Staging16 stages_16bit() const override { return {false, false}; }
  // The 16-bit dense layers, convolution forward and weight gradient may run on tensor cores
  // (gemm_mma.cuh, conv2d_forward_mma.cuh, conv2d_backward_mma.cu; where they pay, or always
  // with PCNN_MMA=1).
  bool rounds_16bit_products(Op op) const override {
    return op == Op::linear_forward_16 || op == Op::linear_backward_16 ||
           op == Op::conv2d_fused_forward_16 || op == Op::conv2d_fused_backward_16;
  }

  bool supports_graphs() const override { return true; }
  void graph_begin_capture() override;
  bool graph_end_capture() override;
  void graph_launch() override;

 private:
  cuda::CudaContext ctx_;
};

}  // namespace pcnn
