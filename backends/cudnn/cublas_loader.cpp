// cuBLAS, loaded only when a cudnn backend is created. Linking libcublas directly costs every
// pcnn process about 150 MB of resident memory at start-up (its relocations), even a CPU-only
// run; so this file defines the few cuBLAS entry points the backend calls and forwards each to
// the library opened with dlopen on first use. Without the library, cublasCreate fails and the
// backend reports itself unusable.
#include <cublas_v2.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

namespace {

#ifndef PCNN_CUBLAS_LIBRARY
#define PCNN_CUBLAS_LIBRARY "libcublas.so"
#endif

void* cublas_library() {
  static void* handle = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    // The library this build was configured with, then whatever the loader finds by name.
    for (const char* name : {PCNN_CUBLAS_LIBRARY, "libcublas.so.13", "libcublas.so"}) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle) break;
    }
  });
  return handle;
}

template <class F>
F resolve(const char* symbol) {
  void* lib = cublas_library();
  return lib ? reinterpret_cast<F>(dlsym(lib, symbol)) : nullptr;
}

// Forwards a call to the library's `name`, or returns `missing` when it cannot be loaded.
#define PCNN_CUBLAS_FORWARD(name, missing, params, args)                    \
  extern "C" cublasStatus_t CUBLASWINAPI name params {                      \
    using Fn = cublasStatus_t(CUBLASWINAPI*) params;                        \
    static const Fn fn = resolve<Fn>(#name);                                \
    return fn ? fn args : missing;                                          \
  }

}  // namespace

PCNN_CUBLAS_FORWARD(cublasCreate_v2, CUBLAS_STATUS_NOT_INITIALIZED, (cublasHandle_t * handle),
                    (handle))
PCNN_CUBLAS_FORWARD(cublasDestroy_v2, CUBLAS_STATUS_NOT_INITIALIZED, (cublasHandle_t handle),
                    (handle))
PCNN_CUBLAS_FORWARD(cublasGetVersion_v2, CUBLAS_STATUS_NOT_INITIALIZED,
                    (cublasHandle_t handle, int* version), (handle, version))
PCNN_CUBLAS_FORWARD(cublasSetWorkspace_v2, CUBLAS_STATUS_NOT_INITIALIZED,
                    (cublasHandle_t handle, void* workspace, size_t bytes),
                    (handle, workspace, bytes))
PCNN_CUBLAS_FORWARD(cublasSetStream_v2, CUBLAS_STATUS_NOT_INITIALIZED,
                    (cublasHandle_t handle, cudaStream_t stream), (handle, stream))
PCNN_CUBLAS_FORWARD(cublasSetMathMode, CUBLAS_STATUS_NOT_INITIALIZED,
                    (cublasHandle_t handle, cublasMath_t mode), (handle, mode))
PCNN_CUBLAS_FORWARD(cublasSgemm_v2, CUBLAS_STATUS_NOT_INITIALIZED,
                    (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                     int m, int n, int k, const float* alpha, const float* A, int lda,
                     const float* B, int ldb, const float* beta, float* C, int ldc),
                    (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))

PCNN_CUBLAS_FORWARD(cublasSgemv_v2, CUBLAS_STATUS_NOT_INITIALIZED,
                    (cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                     const float* alpha, const float* A, int lda, const float* x, int incx,
                     const float* beta, float* y, int incy),
                    (handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy))

extern "C" const char* CUBLASWINAPI cublasGetStatusString(cublasStatus_t status) {
  using Fn = const char*(CUBLASWINAPI*)(cublasStatus_t);
  static const Fn fn = resolve<Fn>("cublasGetStatusString");
  return fn ? fn(status) : "the cuBLAS library could not be loaded (dlopen libcublas failed)";
}
