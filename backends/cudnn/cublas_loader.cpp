// cuBLAS, loaded only when a cudnn backend is created. Linking libcublas directly costs every
// pcnn process about 150 MB of resident memory at start-up (its relocations), even a CPU-only
// run; so this file defines the few cuBLAS entry points the backend calls and forwards each to
// the library opened with dlopen on first use. Without the library, cublasCreate fails and the
// backend reports itself unusable.
#include <cublas_v2.h>

#include <string>

#include "backends/cuda/dynamic_library.hpp"

// PCNN_CUBLAS_LIBRARY: the library found when the build was configured (CMake defines it); then the
// sonames the loader may find.
PCNN_DYNAMIC_LIBRARY(cublas_library, PCNN_CUBLAS_LIBRARY, "libcublas.so.13", "libcublas.so")

#define PCNN_CUBLAS_FORWARD(name, params, args)                                           \
  PCNN_DYNAMIC_FORWARD(cublas_library(), cublasStatus_t, name, CUBLAS_STATUS_NOT_INITIALIZED, \
                       params, args)

PCNN_CUBLAS_FORWARD(cublasCreate_v2, (cublasHandle_t * handle), (handle))
PCNN_CUBLAS_FORWARD(cublasDestroy_v2, (cublasHandle_t handle), (handle))
PCNN_CUBLAS_FORWARD(cublasGetVersion_v2, (cublasHandle_t handle, int* version), (handle, version))
PCNN_CUBLAS_FORWARD(cublasSetWorkspace_v2,
                    (cublasHandle_t handle, void* workspace, size_t bytes),
                    (handle, workspace, bytes))
PCNN_CUBLAS_FORWARD(cublasSetStream_v2,
                    (cublasHandle_t handle, cudaStream_t stream), (handle, stream))
PCNN_CUBLAS_FORWARD(cublasSetMathMode,
                    (cublasHandle_t handle, cublasMath_t mode), (handle, mode))
PCNN_CUBLAS_FORWARD(cublasSgemm_v2,
                    (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                     int m, int n, int k, const float* alpha, const float* A, int lda,
                     const float* B, int ldb, const float* beta, float* C, int ldc),
                    (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
PCNN_CUBLAS_FORWARD(cublasSgemv_v2,
                    (cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                     const float* alpha, const float* A, int lda, const float* x, int incx,
                     const float* beta, float* y, int incy),
                    (handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy))

PCNN_DYNAMIC_ERROR_STRING(cublas_library(), "cuBLAS", cublasGetStatusString, cublasStatus_t)
