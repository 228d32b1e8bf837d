// The cudnn backend: the vendor-library reference the hand-tuned cuda backend is measured
// against. Convolutions, pooling and bias run in cuDNN (legacy descriptor API), GEMM in cuBLAS;
// what the libraries do not cover (activations, loss with its metric sums, optimizers, batch
// gathering, fill, increment) are small kernels in this folder built on the shared core/ math.
//
// Everything runs on one stream owned by the backend, set on both library handles, so a whole
// training step can be captured as a CUDA graph and replayed.
//
// Convolution algorithms are chosen once per shape and direction, on first use, and cached:
// cudnnFind* times every algorithm (the default) or, with PCNN_CUDNN_ALGO=heuristic (and always
// while a graph is being captured, when nothing may run), cudnnGet*_v7 asks the heuristics. One
// workspace, grown to the largest chosen algorithm's need, serves every call.
// Math is strict FP32 (CUDNN_FMA_MATH, cuBLAS default math) so results agree with serial;
// PCNN_CUDNN_TF32=1 lets both libraries use TF32 tensor cores (faster, ~1e-3 relative error).
// Only algorithms that sum the convolution directly are taken (implicit/explicit GEMM, direct):
// the FFT and Winograd ones compute it through a transform whose FP32 rounding is far larger
// (3e-4 normalised on LeNet-5's conv1 weight gradient, H200, cuDNN 9.14), and cudnnFind picks
// them on some runs and not others. PCNN_CUDNN_ALGOS=all lets them compete too.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cudnn/cudnn_check.hpp"
#include "backends/cudnn/descriptors.hpp"

namespace pcnn {

namespace vendor {

// One chosen algorithm of one convolution direction.
template <class Algo>
struct ConvChoice {
  bool chosen = false;
  Algo algo{};
  cudnnMathType_t math = CUDNN_FMA_MATH;
  size_t workspace = 0;  // bytes
};

// Descriptors and chosen algorithms of one convolution shape.
struct ConvPlan {
  TensorDesc x, y, bias;  // (N,C,H,W), (N,K,P,Q), (1,K,1,1)
  FilterDesc w;           // (K,C,R,S)
  ConvDesc conv;          // cross-correlation, symmetric pad and stride
  ConvChoice<cudnnConvolutionFwdAlgo_t> forward;
  ConvChoice<cudnnConvolutionBwdDataAlgo_t> backward_data;
  ConvChoice<cudnnConvolutionBwdFilterAlgo_t> backward_filter;
};

}  // namespace vendor

class CudnnBackend : public Backend {
 public:
  explicit CudnnBackend(int device);
  ~CudnnBackend() override;
  CudnnBackend(const CudnnBackend&) = delete;
  CudnnBackend& operator=(const CudnnBackend&) = delete;

  std::string name() const override { return "cudnn"; }
  std::string device_name() const override { return device_name_; }
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

  bool supports_graphs() const override { return true; }
  void graph_begin_capture() override;
  void graph_end_capture() override;
  void graph_launch() override;

 private:
  using ConvKey = std::array<int, 9>;  // N, C, H, W, K, R, S, stride, pad

  void release() noexcept;  // frees whatever the constructor got, in reverse order
  vendor::ConvPlan& conv_plan(const Conv2dShape& s);
  void choose_forward(const Conv2dShape& s, vendor::ConvPlan& p);
  void choose_backward_data(const Conv2dShape& s, vendor::ConvPlan& p);
  void choose_backward_filter(const Conv2dShape& s, vendor::ConvPlan& p);
  // Grows one device buffer (of `bytes`) to at least `need` bytes; throws while capturing.
  void grow(void*& buffer, size_t& bytes, size_t need, const char* what);
  void ensure_workspace(size_t bytes);
  // Device scratch for the bias gradient: a vector of at least n ones, n floats of partial sums.
  const float* ones_of(size_t n);
  float* bias_scratch(size_t n);
  void retire(void* buffer);  // frees it, or keeps it until the graph that may read it is gone
  void free_retired() noexcept;
  void abandon_capture() noexcept;
  void set_pool(PoolKind kind, const Pool2dShape& s);
  bool search_algorithms() const { return time_algorithms_ && !capturing_; }

  int device_ = 0;
  std::string device_name_;
  bool time_algorithms_ = true;  // cudnnFind* (true) or cudnnGet*_v7 heuristics (false)
  bool allow_tf32_ = false;
  bool allow_transforms_ = false;  // FFT / Winograd convolution algorithms (PCNN_CUDNN_ALGOS=all)

  cudaStream_t stream_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  void* blas_workspace_ = nullptr;  // preset so cuBLAS allocates nothing while capturing
  void* workspace_ = nullptr;       // cuDNN convolution workspace, grown on demand
  size_t workspace_bytes_ = 0;
  void* ones_ = nullptr;            // bias gradient: ones to multiply by, and partial sums
  size_t ones_bytes_ = 0;
  void* bias_partial_ = nullptr;
  size_t bias_partial_bytes_ = 0;
  std::vector<void*> retired_;      // outgrown scratch a captured graph still points into

  std::map<ConvKey, std::unique_ptr<vendor::ConvPlan>> conv_plans_;
  // Re-set per call for pooling and bias (cheap host calls; see descriptors.hpp).
  std::unique_ptr<vendor::TensorDesc> desc_a_, desc_b_;
  std::unique_ptr<vendor::PoolDesc> pool_desc_;

  bool capturing_ = false;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
};

}  // namespace pcnn
