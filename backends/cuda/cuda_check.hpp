// PCNN_CUDA_CHECK and PCNN_CUDA_CHECK_LAUNCH: every CUDA runtime call and kernel launch of this
// backend goes through them, so a failure becomes one pcnn::Error that names the file, the line,
// the call and CUDA's own words for what went wrong.
#pragma once

#include <cuda_runtime.h>

#include "core/check.hpp"

namespace pcnn::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

}  // namespace pcnn::cuda

#define PCNN_CUDA_CHECK(x)                                                        \
  do {                                                                            \
    const cudaError_t pcnn_cuda_err_ = (x);                                       \
    if (pcnn_cuda_err_ != cudaSuccess)                                            \
      ::pcnn::cuda::throw_cuda_error(pcnn_cuda_err_, #x, __FILE__, __LINE__);     \
  } while (0)

// After a <<<...>>> launch: a bad configuration shows up here, not at the next call.
#define PCNN_CUDA_CHECK_LAUNCH(kernel_name)                                       \
  do {                                                                            \
    const cudaError_t pcnn_cuda_err_ = cudaGetLastError();                        \
    if (pcnn_cuda_err_ != cudaSuccess)                                            \
      ::pcnn::cuda::throw_cuda_error(pcnn_cuda_err_, "launch of " kernel_name,   \
                                     __FILE__, __LINE__);                         \
  } while (0)
