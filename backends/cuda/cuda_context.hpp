// What every launcher of the cuda backend needs: the one stream all work goes to, the device's
// size, and scratch memory that is grown lazily (never while a graph is being captured) and
// never freed under a graph that may still use it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

namespace pcnn::cuda {

class CudaContext {
 public:
  // Throws pcnn::Unavailable when there is no usable GPU with this ordinal.
  explicit CudaContext(int device);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  cudaStream_t stream() const { return stream_; }
  int device() const { return device_; }
  int sm_count() const { return sm_count_; }
  const std::string& device_name() const { return name_; }

  // Makes this context's GPU the calling thread's current device (a no-op when it already is):
  // replicas of a data-parallel run each own a GPU and may share one host thread.
  void bind() const;

  // True while the stream is being captured into a graph.
  bool capturing() const;

  // At least `floats` floats of device scratch, contents undefined. Growing it while capturing
  // throws: the trainer runs one step eagerly first, and that step sizes the scratch.
  float* scratch(size_t floats);

  // `count` unsigned counters, zero on entry to every kernel: kernels that use them to find the
  // last block of a reduction put them back to zero before they finish. count <= kCounters.
  unsigned* counters(size_t count);
  static constexpr size_t kCounters = 1 << 14;

 private:
  int device_ = 0;
  int sm_count_ = 1;
  std::string name_;
  cudaStream_t stream_ = nullptr;
  float* scratch_ = nullptr;
  size_t scratch_floats_ = 0;
  std::vector<void*> retired_;  // old scratch buffers an instantiated graph may still point to
  unsigned* counters_ = nullptr;
};

}  // namespace pcnn::cuda
