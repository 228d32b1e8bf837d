// cudnn backend: construction (the library handles on the cuda base's stream, the switches read
// from the environment), teardown, and the registry's factory. The ops are in their op files.
#include "backends/cudnn/cudnn_backend.hpp"

#include <cstdlib>

#include "backends/registry.hpp"

namespace pcnn {

namespace {

// cuBLAS's own recommendation for Hopper; preset so it never allocates while a graph is captured.
constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string version_string(int v) {  // major*10000 + minor*100 + patch, as both libraries report
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

// A library handle, created on the current device. A GPU without a working cuDNN or cuBLAS
// (driver too old, libraries missing) cannot run this backend here: that is "unavailable", not a
// bug.
template <class Owner, class Create, class Status, class Describe>
Owner create_handle(Create create, Status ok, Describe describe, const char* call) {
  typename Owner::pointer handle = nullptr;
  const Status status = create(&handle);
  if (status != ok)
    throw Unavailable(std::string("cudnn: ") + call + " failed: " + describe(status));
  return Owner(handle);
}

}  // namespace

// The base has found the GPU, made it current and created the stream.
CudnnBackend::CudnnBackend(int device) : CudaBackend(device) {
  const std::string algo = env_or("PCNN_CUDNN_ALGO", "find");
  PCNN_CHECK(algo == "find" || algo == "heuristic",
             "PCNN_CUDNN_ALGO must be 'find' or 'heuristic', got '" << algo << "'");
  time_algorithms_ = algo == "find";
  allow_tf32_ = env_or("PCNN_CUDNN_TF32", "0") == "1";
  const std::string algos = env_or("PCNN_CUDNN_ALGOS", "direct");
  PCNN_CHECK(algos == "direct" || algos == "all",
             "PCNN_CUDNN_ALGOS must be 'direct' or 'all', got '" << algos << "'");
  allow_transforms_ = algos == "all";
  log_choices_ = env_or("PCNN_CUDNN_LOG", "0") == "1";

  dnn_ = create_handle<vendor::DnnHandle>(cudnnCreate, CUDNN_STATUS_SUCCESS, cudnnGetErrorString,
                                          "cudnnCreate");
  blas_ = create_handle<vendor::BlasHandle>(cublasCreate, CUBLAS_STATUS_SUCCESS,
                                            cublasGetStatusString, "cublasCreate");

  const cudaStream_t stream = context().stream();
  PCNN_CUDNN_CHECK(cudnnSetStream(dnn_.get(), stream));
  PCNN_CUBLAS_CHECK(cublasSetStream(blas_.get(), stream));
  PCNN_CUBLAS_CHECK(cublasSetWorkspace(blas_.get(), blas_workspace_.ensure(kBlasWorkspaceBytes),
                                       kBlasWorkspaceBytes));
  PCNN_CUBLAS_CHECK(cublasSetMathMode(
      blas_.get(), allow_tf32_ ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));

  desc_a_ = std::make_unique<vendor::TensorDesc>();
  desc_b_ = std::make_unique<vendor::TensorDesc>();
  pool_desc_ = std::make_unique<vendor::PoolDesc>();

  int blas_version = 0;
  PCNN_CUBLAS_CHECK(cublasGetVersion(blas_.get(), &blas_version));
  device_name_ = CudaBackend::device_name() + " (cuDNN " +
                 version_string(int(cudnnGetVersion())) + ", cuBLAS " +
                 version_string(blas_version) + (allow_tf32_ ? ", TF32" : ", FP32") +
                 (allow_transforms_ ? ", all algorithms" : ", direct algorithms") + ")";
}

CudnnBackend::~CudnnBackend() {
  // The members (handles, then their workspaces) go before the base's stream and graph: end a
  // capture the handles' stream may still be in, and let queued library work finish first.
  // Unchecked, as a destructor must not throw.
  cudaSetDevice(context().device());
  context().abandon_capture();
  cudaStreamSynchronize(context().stream());
}

std::unique_ptr<Backend> create_cudnn_backend(const BackendOptions& opts) {
  return std::make_unique<CudnnBackend>(opts.device);
}

}  // namespace pcnn
