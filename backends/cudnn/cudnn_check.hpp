// Error checks for CUDA, cuDNN and cuBLAS calls in the cudnn backend: each failing call throws
// pcnn::Error naming the file, line, the call as written and the library's own error string.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "core/check.hpp"

namespace pcnn::vendor {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);
[[noreturn]] void throw_cudnn_error(cudnnStatus_t st, const char* call, const char* file,
                                    int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t st, const char* call, const char* file,
                                     int line);

}  // namespace pcnn::vendor

#define PCNN_CUDA_CHECK(call)                                                            \
  do {                                                                                   \
    const cudaError_t pcnn_err_ = (call);                                                \
    if (pcnn_err_ != cudaSuccess)                                                        \
      ::pcnn::vendor::throw_cuda_error(pcnn_err_, #call, __FILE__, __LINE__);            \
  } while (0)

#define PCNN_CUDNN_CHECK(call)                                                           \
  do {                                                                                   \
    const cudnnStatus_t pcnn_st_ = (call);                                               \
    if (pcnn_st_ != CUDNN_STATUS_SUCCESS)                                                \
      ::pcnn::vendor::throw_cudnn_error(pcnn_st_, #call, __FILE__, __LINE__);            \
  } while (0)

#define PCNN_CUBLAS_CHECK(call)                                                          \
  do {                                                                                   \
    const cublasStatus_t pcnn_st_ = (call);                                              \
    if (pcnn_st_ != CUBLAS_STATUS_SUCCESS)                                               \
      ::pcnn::vendor::throw_cublas_error(pcnn_st_, #call, __FILE__, __LINE__);           \
  } while (0)

// After a kernel launch: a bad configuration shows up here, not at the next synchronise.
#define PCNN_CUDA_CHECK_LAUNCH() PCNN_CUDA_CHECK(cudaGetLastError())
