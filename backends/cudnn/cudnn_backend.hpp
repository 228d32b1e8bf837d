// The cudnn backend: the vendor-library reference the hand-written cuda backend is measured
// against. It derives from CudaBackend, the way openmp derives from serial, and replaces only what
// cuDNN and cuBLAS compute: convolutions (forward, backward data, backward filter), pooling
// forward and average-pooling backward, bias add (cuDNN), bias gradient and GEMM (cuBLAS). The
// fused ops stay composed of those library calls (Backend's defaults), not cuda's hand-fused
// kernels. Everything else is the cuda base's: memory, the stream, graph capture, scratch, the
// check macros, gather, loss, optimizers, activations (cuDNN's tanh and sigmoid are not guaranteed
// to round like tanhf / expf), fill, increment, and max-pooling backward (cuDNN routes a tied
// window to whichever maximum it likes; the contract wants the first).
//
// Both library handles run on the base's stream, so a whole training step is captured as one
// CUDA graph and replayed.
//
// Convolution algorithms are chosen once per shape and direction, on first use, and cached:
// cudnnFind* times every algorithm (the default; five searches, ranked by median time) or, with
// PCNN_CUDNN_ALGO=heuristic (and always while a graph is being captured, when nothing may run),
// cudnnGet*_v7 asks the heuristics. One workspace, grown to the largest chosen algorithm's need,
// serves every call. PCNN_CUDNN_LOG=1 prints each choice on stderr.
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

#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/scratch_buffer.hpp"
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

class CudnnBackend : public CudaBackend {
 public:
  explicit CudnnBackend(int device);  // throws Unavailable without a GPU, cuDNN or cuBLAS
  ~CudnnBackend() override;

  std::string name() const override { return "cudnn"; }
  std::string device_name() const override { return device_name_; }

  // What the libraries compute (conv2d.cpp, gemm.cpp, pool2d.cpp, activation.cpp).
  PCNN_OVERRIDE(gemm)
  PCNN_OVERRIDE(conv2d_forward)
  PCNN_OVERRIDE(conv2d_backward_data)
  PCNN_OVERRIDE(conv2d_backward_weights)
  PCNN_OVERRIDE(pool2d_forward)
  PCNN_OVERRIDE(pool2d_backward)
  PCNN_OVERRIDE(bias_add)
  PCNN_OVERRIDE(bias_backward)
  PCNN_OVERRIDE(batchnorm_forward_train)  // batchnorm.cpp
  PCNN_OVERRIDE(batchnorm_forward_infer)
  PCNN_OVERRIDE(batchnorm_backward)

  // Composed of the library calls above (Backend's defaults), undoing the cuda base's fusion.
  PCNN_OVERRIDE(conv2d_fused_forward)
  PCNN_OVERRIDE(conv2d_fused_backward)
  PCNN_OVERRIDE(linear_forward)
  PCNN_OVERRIDE(linear_backward)
  // The composed 16-bit defaults around the library calls.
  PCNN_OVERRIDE(conv2d_fused_forward_16)  // conv2d.cpp
  PCNN_OVERRIDE(conv2d_fused_backward_16)
  PCNN_OVERRIDE(linear_forward_16)  // gemm.cpp
  PCNN_OVERRIDE(linear_backward_16)
  Staging16 stages_16bit() const override { return {}; }  // every default stages
  bool rounds_16bit_products(Op) const override { return false; }

 private:
  using ConvKey = std::array<int, 9>;  // N, C, H, W, K, R, S, stride, pad

  cudnnHandle_t dnn() const { return dnn_.get(); }
  cublasHandle_t blas() const { return blas_.get(); }
  vendor::ConvPlan& conv_plan(const Conv2dShape& s);
  // The plan of shape s ready for one direction (named by its cuDNN result type): its algorithm
  // chosen on first use (choose, which also sizes the workspace) and its math type set.
  template <class Perf>
  const vendor::ConvPlan& plan_for(const Conv2dShape& s);
  template <class Perf>
  void choose(const Conv2dShape& s, vendor::ConvPlan& p);
  bool search_algorithms() const { return time_algorithms_ && !context().capturing(); }
  // Device scratch for the bias gradient: a vector of at least n ones, n floats of partial sums.
  const float* ones_of(size_t n);
  float* bias_scratch(size_t n);
  void set_pool(PoolKind kind, const Pool2dShape& s);
  void set_batchnorm(int N, int C, int HW);

  bool time_algorithms_ = true;    // cudnnFind* (true) or cudnnGet*_v7 heuristics (false)
  bool allow_tf32_ = false;
  bool allow_transforms_ = false;  // FFT / Winograd convolution algorithms (PCNN_CUDNN_ALGOS=all)
  bool log_choices_ = false;       // one stderr line per chosen algorithm (PCNN_CUDNN_LOG=1)
  std::string device_name_;

  // Declared before the handles, so the handles are destroyed first. cuBLAS's workspace is preset
  // so that cuBLAS allocates nothing while a graph is being captured.
  cuda::ScratchBuffer blas_workspace_{context(), "cuBLAS's workspace"};
  cuda::ScratchBuffer workspace_{context(), "cudnn's convolution workspace"};
  cuda::ScratchBuffer ones_{context(), "cudnn's bias-gradient ones"};
  cuda::ScratchBuffer bias_partial_{context(), "cudnn's bias-gradient partial sums"};
  vendor::DnnHandle dnn_;
  vendor::BlasHandle blas_;

  std::map<ConvKey, std::unique_ptr<vendor::ConvPlan>> conv_plans_;
  // Re-set per call for pooling and bias (cheap host calls; see descriptors.hpp).
  std::unique_ptr<vendor::TensorDesc> desc_a_, desc_b_;
  std::unique_ptr<vendor::PoolDesc> pool_desc_;
};

}  // namespace pcnn
