// PCNN_CUDNN_CHECK and PCNN_CUBLAS_CHECK: every cuDNN and cuBLAS call of the cudnn backend goes
// through them, so a failure throws one pcnn::Error naming the file, the line, the call as written
// and the library's own error string. CUDA runtime calls use the cuda base's PCNN_CUDA_CHECK; all
// three share its one body (PCNN_GPU_STATUS_CHECK).
#pragma once

#include <cublas_v2.h>
#include <cudnn.h>

#include "backends/cuda/cuda_check.hpp"

namespace pcnn::vendor {

[[noreturn]] void throw_cudnn_error(cudnnStatus_t st, const char* call, const char* file,
                                    int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t st, const char* call, const char* file,
                                     int line);

}  // namespace pcnn::vendor

#define PCNN_CUDNN_CHECK(x) \
  PCNN_GPU_STATUS_CHECK(x, #x, CUDNN_STATUS_SUCCESS, ::pcnn::vendor::throw_cudnn_error)
#define PCNN_CUBLAS_CHECK(x) \
  PCNN_GPU_STATUS_CHECK(x, #x, CUBLAS_STATUS_SUCCESS, ::pcnn::vendor::throw_cublas_error)
