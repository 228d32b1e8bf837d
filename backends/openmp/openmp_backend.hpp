// The OpenMP backend: multi-core CPU kernels over host memory. Every hot kernel runs in one
// parallel region with a static split in which each thread owns whole outputs (images, channel
// planes, rows, GEMM tiles), each summed in an order fixed by the shapes; where outputs are sums
// over the batch (weight and bias gradients, loss metrics) a fixed set of image groups keeps one
// partial each, added in group order. So results are deterministic, and the same for any thread
// count. Memory management, increment and other trivial entry points come from SerialBackend.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "backends/openmp/batch_partials.hpp"
#include "backends/openmp/conv_gemm.hpp"
#include "backends/openmp/free_cpus.hpp"
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
  // threads 0: all cores (OMP_NUM_THREADS where set). With no count asked for either way and
  // libgomp spinning at barriers, the team follows the CPUs other processes leave free
  // (omp::FreeCpuTracker, re-read at most every 0.25 s when a batch is gathered). Results do not
  // depend on the team size, so it may change between steps.
  explicit OpenMPBackend(int threads);

  std::string name() const override { return "openmp"; }
  std::string device_name() const override;

  void fill(float* dst, float value, size_t n) override;
  void copy(void* dst, const void* src, size_t bytes) override;

  PCNN_OVERRIDE_REQUIRED_OPS

  PCNN_OVERRIDE(conv2d_fused_forward)
  PCNN_OVERRIDE(conv2d_fused_backward)
  PCNN_OVERRIDE(linear_forward)
  PCNN_OVERRIDE(linear_backward)

 private:
  omp::ThreadScratch& scratch(int tid) { return scratch_[size_t(tid)]; }
  // Sets threads_ from the free CPUs when following them (called once per gathered batch).
  void follow_free_cpus() {
    if (free_cpus_) threads_ = free_cpus_->team();
  }

  int max_threads_;
  int threads_;
  std::unique_ptr<omp::FreeCpuTracker> free_cpus_;  // null: a fixed team of max_threads_
  std::vector<omp::ThreadScratch> scratch_;  // one per thread
  omp::ConvTables conv_tables_;              // of the convolution being run, built per call
  omp::GroupPartials partials_;              // batch sums of the weight gradient being run
};

}  // namespace pcnn
