// The cuda backend's class: memory on its stream, forwarding to the kernel launchers, graph
// capture and replay, and the registry's factory.
#include "backends/cuda/cuda_backend.hpp"

#include <memory>

#include "backends/cuda/activation.cuh"
#include "backends/cuda/conv2d.cuh"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/data.cuh"
#include "backends/cuda/gemm.cuh"
#include "backends/cuda/loss.cuh"
#include "backends/cuda/optimizer.cuh"
#include "backends/cuda/pool2d.cuh"
#include "backends/registry.hpp"

namespace pcnn {

CudaBackend::CudaBackend(int device) : ctx_(device) {}

CudaBackend::~CudaBackend() {
  if (graph_) cudaGraphExecDestroy(graph_);  // no throwing from a destructor
}

// ---- memory -----------------------------------------------------------------------------

void* CudaBackend::allocate(size_t bytes) {
  ctx_.bind();
  void* p = nullptr;
  // cudaMalloc aligns to at least 256 bytes, as the contract asks.
  PCNN_CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1));
  return p;
}

void CudaBackend::deallocate(void* ptr) {
  ctx_.bind();
  if (ptr) PCNN_CUDA_CHECK(cudaFree(ptr));
}

void CudaBackend::upload(void* dst, const void* src, size_t bytes) {
  ctx_.bind();
  if (bytes)
    PCNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ctx_.stream()));
}

void CudaBackend::download(void* dst, const void* src, size_t bytes) {
  ctx_.bind();
  PCNN_CHECK(!ctx_.capturing(), "cuda download: reading to the host inside a captured graph");
  if (bytes)
    PCNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ctx_.stream()));
  PCNN_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
}

void CudaBackend::copy(void* dst, const void* src, size_t bytes) {
  ctx_.bind();
  if (bytes)
    PCNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ctx_.stream()));
}

void CudaBackend::fill(float* dst, float value, size_t n) {
  ctx_.bind();
  cuda::fill(ctx_, dst, value, n);
}

void CudaBackend::synchronize() {
  ctx_.bind();
  PCNN_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
}

// ---- kernels ------------------------------------------------------------------------------

void CudaBackend::gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                       const float* A, int lda, const float* B, int ldb, float beta, float* C,
                       int ldc) {
  ctx_.bind();
  cuda::gemm(ctx_, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void CudaBackend::conv2d_forward(const Conv2dShape& s, const float* x, const float* w,
                                 const float* b, float* y) {
  ctx_.bind();
  cuda::conv2d_fused_forward(ctx_, s, ConvEpilogue{}, x, w, b, y, y);
}

void CudaBackend::conv2d_backward_data(const Conv2dShape& s, const float* dy, const float* w,
                                       float* dx) {
  ctx_.bind();
  cuda::conv2d_fused_backward(ctx_, s, ConvEpilogue{}, nullptr, w, nullptr, dy, nullptr, dx,
                              nullptr, nullptr);
}

void CudaBackend::conv2d_backward_weights(const Conv2dShape& s, const float* x, const float* dy,
                                          float* dw, float* db) {
  ctx_.bind();
  cuda::conv2d_fused_backward(ctx_, s, ConvEpilogue{}, x, nullptr, nullptr, dy, nullptr,
                              nullptr, dw, db);
}

void CudaBackend::pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x,
                                 float* y) {
  ctx_.bind();
  cuda::pool2d_forward(ctx_, kind, s, x, y);
}

void CudaBackend::pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x,
                                  const float* dy, float* dx) {
  ctx_.bind();
  cuda::pool2d_backward(ctx_, kind, s, x, dy, dx);
}

void CudaBackend::bias_add(int N, int C, int HW, const float* b, float* y) {
  ctx_.bind();
  cuda::bias_add(ctx_, N, C, HW, b, y);
}

void CudaBackend::bias_backward(int N, int C, int HW, const float* dy, float* db) {
  ctx_.bind();
  cuda::bias_backward(ctx_, N, C, HW, dy, db);
}

void CudaBackend::activation_forward(Activation act, size_t n, const float* x, float* y) {
  ctx_.bind();
  cuda::activation_forward(ctx_, act, n, x, y);
}

void CudaBackend::activation_backward(Activation act, size_t n, const float* y, const float* dy,
                                      float* dx) {
  ctx_.bind();
  cuda::activation_backward(ctx_, act, n, y, dy, dx);
}

void CudaBackend::softmax_cross_entropy(int N, int K, const float* logits,
                                        const int32_t* labels, float* dlogits, float* metrics) {
  ctx_.bind();
  cuda::softmax_cross_entropy(ctx_, N, K, logits, labels, dlogits, metrics);
}

void CudaBackend::sgd_update(size_t n, float* params, const float* grads, float* velocity,
                             const float* hyper) {
  ctx_.bind();
  cuda::sgd_update(ctx_, n, params, grads, velocity, hyper);
}

void CudaBackend::adam_update(size_t n, float* params, const float* grads, float* m, float* v,
                              const float* hyper, const int32_t* step) {
  ctx_.bind();
  cuda::adam_update(ctx_, n, params, grads, m, v, hyper, step);
}

void CudaBackend::increment(int32_t* counter) {
  ctx_.bind();
  cuda::increment(ctx_, counter);
}

void CudaBackend::gather_train_batch(const DeviceDataset& data, const int32_t* step,
                                     int steps_per_epoch, uint32_t seed,
                                     const BatchLayout& layout, float* x, int32_t* y) {
  ctx_.bind();
  cuda::gather_train_batch(ctx_, data, step, steps_per_epoch, seed, layout, x, y);
}

void CudaBackend::gather_batch(const DeviceDataset& data, int first, const BatchLayout& layout,
                               float* x, int32_t* y) {
  ctx_.bind();
  cuda::gather_batch(ctx_, data, first, layout, x, y);
}

// ---- fused --------------------------------------------------------------------------------

void CudaBackend::conv2d_fused_forward(const Conv2dShape& s, const ConvEpilogue& epi,
                                       const float* x, const float* w, const float* b,
                                       float* act_out, float* y) {
  ctx_.bind();
  cuda::conv2d_fused_forward(ctx_, s, epi, x, w, b, act_out, y);
}

void CudaBackend::conv2d_fused_backward(const Conv2dShape& s, const ConvEpilogue& epi,
                                        const float* x, const float* w, const float* act_out,
                                        const float* dy, float* scratch, float* dx, float* dw,
                                        float* db) {
  ctx_.bind();
  cuda::conv2d_fused_backward(ctx_, s, epi, x, w, act_out, dy, scratch, dx, dw, db);
}

void CudaBackend::linear_forward(int N, int in, int out, Activation act, const float* x,
                                 const float* w, const float* b, float* y) {
  ctx_.bind();
  cuda::linear_forward(ctx_, N, in, out, act, x, w, b, y);
}

void CudaBackend::linear_backward(int N, int in, int out, Activation act, const float* x,
                                  const float* w, const float* y, const float* dy,
                                  float* /*scratch: d(pre-activation) is never materialised*/,
                                  float* dx, float* dw, float* db) {
  ctx_.bind();
  cuda::linear_backward(ctx_, N, in, out, act, x, w, y, dy, dx, dw, db);
}

// ---- graphs -------------------------------------------------------------------------------

void CudaBackend::graph_begin_capture() {
  ctx_.bind();
  PCNN_CHECK(!ctx_.capturing(), "cuda graph_begin_capture: already capturing");
  // Thread-local mode: an unsafe call from this thread (an allocation, a sync) fails loudly.
  PCNN_CUDA_CHECK(cudaStreamBeginCapture(ctx_.stream(), cudaStreamCaptureModeThreadLocal));
}

void CudaBackend::graph_end_capture() {
  ctx_.bind();
  cudaGraph_t graph = nullptr;
  PCNN_CUDA_CHECK(cudaStreamEndCapture(ctx_.stream(), &graph));
  if (graph_) {
    PCNN_CUDA_CHECK(cudaGraphExecDestroy(graph_));
    graph_ = nullptr;
  }
  const cudaError_t err = cudaGraphInstantiate(&graph_, graph, 0);
  cudaGraphDestroy(graph);
  PCNN_CUDA_CHECK(err);
  // Upload now, so the first replay is not slower than the rest.
  PCNN_CUDA_CHECK(cudaGraphUpload(graph_, ctx_.stream()));
}

void CudaBackend::graph_launch() {
  ctx_.bind();
  PCNN_CHECK(graph_, "cuda graph_launch: no graph has been captured");
  PCNN_CUDA_CHECK(cudaGraphLaunch(graph_, ctx_.stream()));
}

// ---- registry -----------------------------------------------------------------------------

std::unique_ptr<Backend> create_cuda_backend(const BackendOptions& opts) {
  return std::make_unique<CudaBackend>(opts.device);
}

}  // namespace pcnn
