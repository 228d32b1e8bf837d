// The cuda backend's context: device selection, its stream, lazily grown scratch and the
// self-resetting counters used by last-block reductions.
#include "backends/cuda/cuda_context.hpp"

#include <sstream>

#include "backends/cuda/cuda_check.hpp"

namespace pcnn::cuda {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  std::ostringstream os;
  os << "CUDA error at " << file << ":" << line << ": " << call << ": "
     << cudaGetErrorString(err) << " (" << cudaGetErrorName(err) << ")";
  throw Error(os.str());
}

CudaContext::CudaContext(int device) : device_(device) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();  // clear the sticky "no device" state for whoever asks next
    throw Unavailable(std::string("no CUDA GPU: ") +
                      (err != cudaSuccess ? cudaGetErrorString(err) : "no device found"));
  }
  if (device < 0 || device >= count)
    throw Unavailable("no CUDA GPU: device " + std::to_string(device) + " asked for, " +
                      std::to_string(count) + " present");
  PCNN_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  PCNN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  name_ = prop.name;
  sm_count_ = prop.multiProcessorCount;
  PCNN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  PCNN_CUDA_CHECK(cudaMalloc(&counters_, kCounters * sizeof(unsigned)));
  PCNN_CUDA_CHECK(cudaMemsetAsync(counters_, 0, kCounters * sizeof(unsigned), stream_));
  PCNN_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

CudaContext::~CudaContext() {
  // Destructors must not throw: errors here are ignored on purpose.
  cudaSetDevice(device_);
  if (stream_) cudaStreamSynchronize(stream_);
  for (void* p : retired_) cudaFree(p);
  cudaFree(scratch_);
  cudaFree(counters_);
  if (stream_) cudaStreamDestroy(stream_);
}

void CudaContext::bind() const {
  int current = -1;
  PCNN_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device_) PCNN_CUDA_CHECK(cudaSetDevice(device_));
}

bool CudaContext::capturing() const {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  PCNN_CUDA_CHECK(cudaStreamIsCapturing(stream_, &status));
  return status != cudaStreamCaptureStatusNone;
}

float* CudaContext::scratch(size_t floats) {
  if (floats <= scratch_floats_) return scratch_;
  PCNN_CHECK(!capturing(), "cuda backend: scratch must grow to " << floats
                                << " floats during graph capture; run one step eagerly first");
  // Keep the old buffer: work already queued, or a graph instantiated earlier, may use it.
  if (scratch_) retired_.push_back(scratch_);
  const size_t grown = floats + floats / 2;
  PCNN_CUDA_CHECK(cudaMalloc(&scratch_, grown * sizeof(float)));
  scratch_floats_ = grown;
  return scratch_;
}

unsigned* CudaContext::counters(size_t count) {
  PCNN_CHECK(count <= kCounters, "cuda backend: " << count << " reduction counters asked for, "
                                                  << kCounters << " exist");
  return counters_;
}

}  // namespace pcnn::cuda
