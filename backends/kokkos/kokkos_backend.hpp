// The Kokkos backend: every kernel of the contract written once with Kokkos, run on Kokkos'
// default execution space (OpenMP for the host build, Cuda for the CUDA build of Kokkos).
// Kernels live in the op files (gemm.cpp, conv2d.cpp, ...); this class owns memory and scratch.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>

#include "backends/backend.hpp"

namespace pcnn {

class KokkosBackend : public Backend {
 public:
  KokkosBackend();
  ~KokkosBackend() override;

  std::string name() const override { return "kokkos"; }
  std::string device_name() const override;
  bool is_host_memory() const override;

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

  // Fused variants: the activation rides in the convolution's / GEMM's epilogue, and max-pool
  // backward applies the activation derivative on the way, saving a pass over act_out.
  void conv2d_fused_forward(const Conv2dShape& s, const ConvEpilogue& epi, const float* x,
                            const float* w, const float* b, float* act_out, float* y) override;
  void conv2d_fused_backward(const Conv2dShape& s, const ConvEpilogue& epi, const float* x,
                             const float* w, const float* act_out, const float* dy,
                             float* scratch, float* dx, float* dw, float* db) override;
  void linear_forward(int N, int in, int out, Activation act, const float* x, const float* w,
                      const float* b, float* y) override;

 private:
  // Device scratch that grows on demand and is reused call after call: the split-K partial sums
  // of GEMMs, zero-padded convolution sources and the column buffer of strided data gradients.
  // Kernels on one execution space run in order, so reuse needs no synchronisation.
  enum Slot { kPartials = 0, kPadded, kColumns, kSlotCount };
  float* workspace(Slot slot, size_t floats);

  const float* padded_input(const Conv2dShape& s, const float* x);

 public:  // holds a Kokkos lambda, which nvcc allows only in public member functions
  // The CPU weight gradient as a direct correlation (conv2d.cpp).
  void weight_grad_direct(const Conv2dShape& s, const float* x, const float* dy, float* dw);

 private:
  void conv_forward_impl(const Conv2dShape& s, const float* x, const float* w, const float* b,
                         Activation act, float* y);

  std::mutex mutex_;                              // guards raw_of_ (allocate may be concurrent)
  std::unordered_map<void*, void*> raw_of_;       // aligned pointer -> kokkos_malloc result
  float* slot_ptr_[kSlotCount] = {};
  size_t slot_size_[kSlotCount] = {};
};

}  // namespace pcnn
