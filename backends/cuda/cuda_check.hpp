// PCNN_CUDA_CHECK: every CUDA runtime call of the GPU backends (cuda, and cudnn built on it) goes
// through it (kernel launches through launch.cuh's launch()), so a failure becomes one
// pcnn::Error that names the file, the line, the call and CUDA's own words for what went wrong.
// PCNN_GPU_STATUS_CHECK is the one body; cudnn_check.hpp builds its cuDNN and cuBLAS checks on it.
#pragma once

#include <cuda_runtime.h>

#include "core/check.hpp"

namespace pcnn::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

}  // namespace pcnn::cuda

// Evaluates `call` once; unless its status equals `ok`, throws through
// fail(status, text, __FILE__, __LINE__). `text` is the call as written (the caller's #call,
// taken before macro expansion, so cublasSgemm is not reported as cublasSgemm_v2).
#define PCNN_GPU_STATUS_CHECK(call, text, ok, fail)                                  \
  do {                                                                               \
    const auto pcnn_gpu_status_ = (call);                                            \
    if (pcnn_gpu_status_ != (ok)) fail(pcnn_gpu_status_, text, __FILE__, __LINE__);  \
  } while (0)

#define PCNN_CUDA_CHECK(x) PCNN_GPU_STATUS_CHECK(x, #x, cudaSuccess, ::pcnn::cuda::throw_cuda_error)
