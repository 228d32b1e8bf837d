// The cuda backend's class outside its kernel ops: memory on its stream, graph capture and
// replay (through the context), and the registry's factory. The ops are defined in their op files.
#include "backends/cuda/cuda_backend.hpp"

#include <memory>

#include "backends/cuda/cuda_check.hpp"
#include "backends/registry.hpp"

namespace pcnn {

CudaBackend::CudaBackend(int device) : ctx_(device) {}

// ---- memory -----------------------------------------------------------------------------

void* CudaBackend::allocate_memory(size_t bytes) {
  ctx_.bind();
  // cudaMalloc aligns to at least 256 bytes, as the contract asks.
  return cuda::malloc_device(bytes ? bytes : 1);
}

void CudaBackend::free_memory(void* ptr) {
  if (!ptr) return;
  // Not checked: callers free from destructors, where a throw would end the program; a real
  // failure (a sticky error) resurfaces at the next checked call.
  cudaSetDevice(ctx_.device());
  // Queued kernels may still use the buffer, and cudaFree is not documented to wait for a
  // non-blocking stream; a sync would break a capture.
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaStreamIsCapturing(ctx_.stream(), &status);
  if (status == cudaStreamCaptureStatusNone) cudaStreamSynchronize(ctx_.stream());
  cudaFree(ptr);
}

int64_t CudaBackend::device_memory_in_use() const {
  ctx_.bind();
  size_t free = 0, total = 0;
  PCNN_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return int64_t(total - free);
}

void CudaBackend::upload(void* dst, const void* src, size_t bytes) {
  ctx_.bind();
  // From pageable memory (all the library uploads) the call returns once src has been staged,
  // so the caller may reuse it at once.
  if (bytes)
    PCNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ctx_.stream()));
}

void CudaBackend::download(void* dst, const void* src, size_t bytes) {
  ctx_.bind();
  PCNN_CHECK(!ctx_.capturing(), "download: reading to the host inside a captured graph");
  if (bytes)
    PCNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ctx_.stream()));
  PCNN_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
}

void CudaBackend::copy(void* dst, const void* src, size_t bytes) {
  ctx_.bind();
  if (bytes && dst != src)
    PCNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ctx_.stream()));
}

void CudaBackend::synchronize() {
  ctx_.bind();
  PCNN_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
}

// ---- graphs -------------------------------------------------------------------------------

void CudaBackend::graph_begin_capture() {
  ctx_.bind();
  ctx_.begin_capture();
}

bool CudaBackend::graph_end_capture() {
  ctx_.bind();
  ctx_.end_capture();  // throws on failure: this backend never falls back
  return true;
}

void CudaBackend::graph_launch() {
  ctx_.bind();
  ctx_.launch_graph();
}

// ---- registry -----------------------------------------------------------------------------

std::unique_ptr<Backend> create_cuda_backend(const BackendOptions& opts) {
  return std::make_unique<CudaBackend>(opts.device);
}

}  // namespace pcnn
