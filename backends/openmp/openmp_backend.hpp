// The OpenMP backend: multi-core CPU kernels over host memory. Every hot kernel runs in one
// parallel region with a static split in which each thread owns whole outputs (images, channel
// planes, rows, GEMM tiles), each summed in an order fixed by the shapes; where outputs are sums
// over the batch (weight and bias gradients, loss metrics) a fixed set of image groups keeps one
// partial each, added in group order. So results are deterministic, and the same for any thread
// count. Memory management, increment and other trivial entry points come from SerialBackend.
#pragma once

#include <algorithm>
#include <vector>

#include "backends/openmp/batch_partials.hpp"
#include "backends/openmp/conv_gemm.hpp"
#include "backends/openmp/gemm_block.hpp"
#include "backends/openmp/parallel.hpp"
#include "backends/serial/serial_backend.hpp"

namespace pcnn {

namespace omp {

// Scratch owned by one thread, grown on demand and kept. Aligned to a cache line so that one
// thread's vector headers never share a line with another's.
struct alignas(64) ThreadScratch {
  std::vector<float> xpad;     // one input image with its zero border (padded convolutions)
  std::vector<float> dxpad;    // gradient of that padded image
  std::vector<float> col;      // w^T dy of one image (data gradient), before col2im
  std::vector<float> grad;     // d(activation output) of one image (fused backward)
  GemmPack pack;
};

// Grows v to at least n floats and returns its data.
inline float* ensure(std::vector<float>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

}  // namespace omp

class OpenMPBackend : public SerialBackend {
 public:
  explicit OpenMPBackend(int threads);

  std::string name() const override { return "openmp"; }
  std::string device_name() const override;

  void fill(float* dst, float value, size_t n) override;
  void copy(void* dst, const void* src, size_t bytes) override;

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

 private:
  omp::ThreadScratch& scratch(int tid) { return scratch_[size_t(tid)]; }

  int threads_;
  std::vector<omp::ThreadScratch> scratch_;  // one per thread
  omp::ConvTables conv_tables_;              // of the convolution being run, built per call
  omp::GroupPartials partials_;              // batch sums of the weight gradient being run
};

}  // namespace pcnn
