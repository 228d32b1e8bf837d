// The Kokkos backend: every kernel of the contract written once with Kokkos, run on Kokkos'
// default execution space (OpenMP for the host build, Cuda for the CUDA build of Kokkos, there on a
// stream of its own that a training step can be captured from as a CUDA graph).
// Kernels live in the op files (gemm.cpp, conv2d.cpp, ...); this class owns memory and scratch.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "backends/backend.hpp"

namespace pcnn {

class KokkosBackend : public Backend {
 public:
  KokkosBackend();
  ~KokkosBackend() override;

  std::string name() const override { return "kokkos"; }
  std::string device_name() const override;
  bool is_host_memory() const override;

  PCNN_OVERRIDE_MEMORY_OPS

  PCNN_OVERRIDE_REQUIRED_OPS

  // Fused variants: the activation rides in the convolution's / GEMM's epilogue. The fused
  // backward is Backend's composition: max_pool_backward_argmax already applies the activation
  // derivative on the way.
  PCNN_OVERRIDE(conv2d_fused_forward)
  PCNN_OVERRIDE(linear_forward)

  // Whole-step CUDA graphs, captured from the backend's one stream (graph.cpp): CUDA build only.
  bool supports_graphs() const override;
  void graph_begin_capture() override;
  bool graph_end_capture() override;
  void graph_launch() override;

 private:
  void release_graph() noexcept;
  void* graph_ = nullptr;  // a cudaGraphExec_t; opaque so host builds need no CUDA headers
  std::vector<void*> retired_;  // outgrown workspace slots the graph may still read

  // Device scratch that grows on demand and is reused call after call: the split-K partial sums
  // of GEMMs, zero-padded convolution sources, the column buffer of strided data gradients and
  // check_step's reduction result. Kernels on one execution space run in order, so reuse needs
  // no synchronisation.
  enum Slot { kPartials = 0, kPadded, kColumns, kCheck, kSlotCount };
  float* workspace(Slot slot, size_t floats);

  const float* padded_input(const Conv2dShape& s, const float* x);

  // C (M,N) = epi(op(A) op(B)), all row-major: the contract's gemm and the dense forward pass
  // (gemm.cpp; Epilogue is a kk::GemmEpilogue).
  template <class Epilogue>
  void matrix_gemm(const char* label, bool trans_a, bool trans_b, int M, int N, int K,
                   const float* A, int lda, const float* B, int ldb, float* C, int ldc,
                   const Epilogue& epi);

 public:  // holds a Kokkos lambda, which nvcc allows only in public member functions
  // The CPU weight gradient as a direct correlation (conv2d.cpp).
  void weight_grad_direct(const Conv2dShape& s, const float* x, const float* dy, float* dw);

 private:
  // The CPU forward as a direct correlation, for the shapes it suits (conv2d.cpp).
  void forward_direct(const Conv2dShape& s, const float* x, const float* w, const float* b,
                      Activation act, float* y);
  void conv_forward_impl(const Conv2dShape& s, const float* x, const float* w, const float* b,
                         Activation act, float* y);

  std::mutex mutex_;                              // guards raw_of_ (allocate may be concurrent)
  std::unordered_map<void*, void*> raw_of_;       // aligned pointer -> kokkos_malloc result
  float* slot_ptr_[kSlotCount] = {};
  size_t slot_size_[kSlotCount] = {};
};

}  // namespace pcnn
