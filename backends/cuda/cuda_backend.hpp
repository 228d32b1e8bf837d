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

  void gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda,
            const float* B, int ldb, float beta, float* C, int ldc) override;

  void conv2d_forward(const Conv2dShape& s, const float* x, const float* w, const float* b,
                      float* y) override;
  void conv2d_backward_data(const Conv2dShape& s, const float* dy, const float* w,
                            float* dx) override;
  void conv2d_backward_weights(const Conv2dShape& s, const float* x, const float* dy, float* dw,
                               float* db) override;

  void pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x, float* y) override;
  void pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x, const float* dy,
                       float* dx) override;

  void bias_add(int N, int C, int HW, const float* b, float* y) override;
  void bias_backward(int N, int C, int HW, const float* dy, float* db) override;
  void activation_forward(Activation act, size_t n, const float* x, float* y) override;
  void activation_backward(Activation act, size_t n, const float* y, const float* dy,
                           float* dx) override;

  void softmax_cross_entropy(int N, int K, const float* logits, const int32_t* labels,
                             float* dlogits, float* metrics) override;

  void sgd_update(size_t n, float* params, const float* grads, float* velocity,
                  const float* hyper) override;
  void adam_update(size_t n, float* params, const float* grads, float* m, float* v,
                   const float* hyper, const int32_t* step) override;
  void increment(int32_t* counter) override;

  void gather_train_batch(const DeviceDataset& data, const int32_t* step, int steps_per_epoch,
                          uint32_t seed, const BatchLayout& layout, float* x,
                          int32_t* y) override;
  void gather_batch(const DeviceDataset& data, int first, const BatchLayout& layout, float* x,
                    int32_t* y) override;

  void conv2d_fused_forward(const Conv2dShape& s, const ConvEpilogue& epi, const float* x,
                            const float* w, const float* b, float* act_out, float* y) override;
  void conv2d_fused_backward(const Conv2dShape& s, const ConvEpilogue& epi, const float* x,
                             const float* w, const float* act_out, const float* dy,
                             float* scratch, float* dx, float* dw, float* db) override;
  void linear_forward(int N, int in, int out, Activation act, const float* x, const float* w,
                      const float* b, float* y) override;
  void linear_backward(int N, int in, int out, Activation act, const float* x, const float* w,
                       const float* y, const float* dy, float* scratch, float* dx, float* dw,
                       float* db) override;

  bool supports_graphs() const override { return true; }
  void graph_begin_capture() override;
  void graph_end_capture() override;
  void graph_launch() override;

 private:
  cuda::CudaContext ctx_;
  cudaGraphExec_t graph_ = nullptr;
};

}  // namespace pcnn
