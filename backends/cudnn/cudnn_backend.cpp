// cudnn backend: construction (device, stream, library handles), memory, the kernels that only
// forward to this folder's launchers, whole-step graphs, and the registry's factory.
#include "backends/cudnn/cudnn_backend.hpp"

#include <cstdlib>
#include <cstring>

#include "backends/cudnn/activation.cuh"
#include "backends/cudnn/data.cuh"
#include "backends/cudnn/loss.cuh"
#include "backends/cudnn/optimizer.cuh"
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

}  // namespace

CudnnBackend::CudnnBackend(int device) : device_(device) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // not sticky: leave the runtime clean for whoever asks next
    throw Unavailable(std::string("cudnn: no usable CUDA device (") + cudaGetErrorString(err) +
                      ")");
  }
  if (count == 0) throw Unavailable("cudnn: no CUDA device found");
  if (device < 0 || device >= count)
    throw Unavailable("cudnn: device " + std::to_string(device) + " requested, but only " +
                      std::to_string(count) + " CUDA device(s) present");

  const std::string algo = env_or("PCNN_CUDNN_ALGO", "find");
  PCNN_CHECK(algo == "find" || algo == "heuristic",
             "PCNN_CUDNN_ALGO must be 'find' or 'heuristic', got '" << algo << "'");
  time_algorithms_ = algo == "find";
  allow_tf32_ = env_or("PCNN_CUDNN_TF32", "0") == "1";
  const std::string algos = env_or("PCNN_CUDNN_ALGOS", "direct");
  PCNN_CHECK(algos == "direct" || algos == "all",
             "PCNN_CUDNN_ALGOS must be 'direct' or 'all', got '" << algos << "'");
  allow_transforms_ = algos == "all";

  try {
    PCNN_CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp prop;
    PCNN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    PCNN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));

    // A GPU without a working cuDNN or cuBLAS (driver too old, libraries missing) cannot run
    // this backend here: that is "unavailable", not a bug.
    const cudnnStatus_t dnn_status = cudnnCreate(&dnn_);
    if (dnn_status != CUDNN_STATUS_SUCCESS) {
      dnn_ = nullptr;
      throw Unavailable(std::string("cudnn: cudnnCreate failed: ") +
                        cudnnGetErrorString(dnn_status));
    }
    const cublasStatus_t blas_status = cublasCreate(&blas_);
    if (blas_status != CUBLAS_STATUS_SUCCESS) {
      blas_ = nullptr;
      throw Unavailable(std::string("cudnn: cublasCreate failed: ") +
                        cublasGetStatusString(blas_status));
    }
    PCNN_CUDNN_CHECK(cudnnSetStream(dnn_, stream_));
    PCNN_CUBLAS_CHECK(cublasSetStream(blas_, stream_));
    PCNN_CUDA_CHECK(cudaMalloc(&blas_workspace_, kBlasWorkspaceBytes));
    PCNN_CUBLAS_CHECK(cublasSetWorkspace(blas_, blas_workspace_, kBlasWorkspaceBytes));
    PCNN_CUBLAS_CHECK(cublasSetMathMode(
        blas_, allow_tf32_ ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));

    desc_a_ = std::make_unique<vendor::TensorDesc>();
    desc_b_ = std::make_unique<vendor::TensorDesc>();
    pool_desc_ = std::make_unique<vendor::PoolDesc>();

    int blas_version = 0;
    PCNN_CUBLAS_CHECK(cublasGetVersion(blas_, &blas_version));
    device_name_ = std::string(prop.name) + " (cuDNN " + version_string(int(cudnnGetVersion())) +
                   ", cuBLAS " + version_string(blas_version) +
                   (allow_tf32_ ? ", TF32" : ", FP32") +
                   (allow_transforms_ ? ", all algorithms" : ", direct algorithms") + ")";
  } catch (...) {
    release();
    throw;
  }
}

CudnnBackend::~CudnnBackend() { release(); }

void CudnnBackend::release() noexcept {
  // Errors are ignored here: a destructor must not throw, and a sticky CUDA error would make
  // every call below fail anyway.
  abandon_capture();
  if (stream_) cudaStreamSynchronize(stream_);
  if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
  if (graph_) cudaGraphDestroy(graph_);
  graph_exec_ = nullptr;
  graph_ = nullptr;
  free_retired();
  conv_plans_.clear();
  desc_a_.reset();
  desc_b_.reset();
  pool_desc_.reset();
  cudaFree(workspace_);
  cudaFree(blas_workspace_);
  cudaFree(ones_);
  cudaFree(bias_partial_);
  workspace_ = blas_workspace_ = nullptr;
  ones_ = bias_partial_ = nullptr;
  ones_bytes_ = bias_partial_bytes_ = 0;
  if (blas_) cublasDestroy(blas_);
  if (dnn_) cudnnDestroy(dnn_);
  if (stream_) cudaStreamDestroy(stream_);
  blas_ = nullptr;
  dnn_ = nullptr;
  stream_ = nullptr;
}

// ---- memory ---------------------------------------------------------------------------------

void* CudnnBackend::allocate(size_t bytes) {
  void* p = nullptr;
  // cudaMalloc aligns to at least 256 bytes; a zero-byte request still gets a distinct pointer.
  const cudaError_t err = cudaMalloc(&p, bytes ? bytes : 256);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw Error("cudnn: cudaMalloc of " + std::to_string(bytes) + " bytes failed: " +
                cudaGetErrorString(err));
  }
  return p;
}

void CudnnBackend::deallocate(void* ptr) {
  if (!ptr) return;
  // Kernels still queued on our stream may use the buffer; cudaFree alone is not documented to
  // wait for a non-blocking stream. Not checked: callers free from destructors, where a throw
  // would terminate the program; a real failure (a sticky error) resurfaces at the next check.
  if (!capturing_) cudaStreamSynchronize(stream_);  // a sync would break a capture
  cudaFree(ptr);
}

void CudnnBackend::upload(void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  PCNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
  // The caller may reuse or free src as soon as we return, even if it is pinned memory.
  PCNN_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudnnBackend::download(void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  PCNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
  PCNN_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudnnBackend::copy(void* dst, const void* src, size_t bytes) {
  if (!bytes || dst == src) return;
  PCNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
}

void CudnnBackend::fill(float* dst, float value, size_t n) {
  vendor::launch_fill(stream_, dst, value, n);
}

void CudnnBackend::synchronize() { PCNN_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

// Scratch only grows, and only outside a capture. A graph captured earlier keeps the addresses
// it saw, so an outgrown buffer is kept alive until that graph is replaced or destroyed (an
// evaluation pass with a new batch size may well grow the workspace between two replays).
void CudnnBackend::retire(void* buffer) {
  if (!buffer) return;
  PCNN_CUDA_CHECK(cudaStreamSynchronize(stream_));  // in-flight work may still use it
  if (graph_exec_) {
    retired_.push_back(buffer);
  } else {
    PCNN_CUDA_CHECK(cudaFree(buffer));
  }
}

void CudnnBackend::free_retired() noexcept {
  for (void* p : retired_) cudaFree(p);
  retired_.clear();
}

// Outgrown device scratch is retired (a captured graph may still read it), never grown while a
// graph is being captured: the eager first step sizes every buffer.
void CudnnBackend::grow(void*& buffer, size_t& bytes, size_t need, const char* what) {
  if (need <= bytes) return;
  if (capturing_) {
    abandon_capture();
    throw Error(std::string("cudnn: ") + what + " needs " + std::to_string(need) +
                " bytes while a graph is being captured (have " + std::to_string(bytes) +
                "); run one step before capturing");
  }
  void* old = buffer;
  buffer = nullptr;
  bytes = 0;
  retire(old);
  buffer = allocate(need);
  bytes = need;
}

void CudnnBackend::ensure_workspace(size_t bytes) {
  grow(workspace_, workspace_bytes_, bytes, "a convolution's workspace");
}

const float* CudnnBackend::ones_of(size_t n) {
  const size_t had = ones_bytes_;
  grow(ones_, ones_bytes_, n * sizeof(float), "the bias gradient's ones");
  float* ones = static_cast<float*>(ones_);
  if (ones_bytes_ != had) fill(ones, 1.f, ones_bytes_ / sizeof(float));  // stream-ordered
  return ones;
}

float* CudnnBackend::bias_scratch(size_t n) {
  grow(bias_partial_, bias_partial_bytes_, n * sizeof(float), "the bias gradient's scratch");
  return static_cast<float*>(bias_partial_);
}

// ---- kernels of this folder ----------------------------------------------------------------

void CudnnBackend::activation_forward(Activation act, size_t n, const float* x, float* y) {
  vendor::launch_activation_forward(stream_, act, n, x, y);
}

void CudnnBackend::activation_backward(Activation act, size_t n, const float* y,
                                       const float* dy, float* dx) {
  vendor::launch_activation_backward(stream_, act, n, y, dy, dx);
}

void CudnnBackend::softmax_cross_entropy(int N, int K, const float* logits,
                                         const int32_t* labels, float* dlogits, float* metrics) {
  vendor::launch_softmax_cross_entropy(stream_, N, K, logits, labels, dlogits, metrics);
}

void CudnnBackend::sgd_update(size_t n, float* params, const float* grads, float* velocity,
                              const float* hyper) {
  vendor::launch_sgd_update(stream_, n, params, grads, velocity, hyper);
}

void CudnnBackend::adam_update(size_t n, float* params, const float* grads, float* m, float* v,
                               const float* hyper, const int32_t* step) {
  vendor::launch_adam_update(stream_, n, params, grads, m, v, hyper, step);
}

void CudnnBackend::increment(int32_t* counter) { vendor::launch_increment(stream_, counter); }

void CudnnBackend::gather_train_batch(const DeviceDataset& data, const int32_t* step,
                                      int steps_per_epoch, uint32_t seed,
                                      const BatchLayout& layout, float* x, int32_t* y) {
  vendor::launch_gather_train_batch(stream_, data, step, steps_per_epoch, seed, layout, x, y);
}

void CudnnBackend::gather_batch(const DeviceDataset& data, int first, const BatchLayout& layout,
                                float* x, int32_t* y) {
  vendor::launch_gather_batch(stream_, data, first, layout, x, y);
}

// ---- whole-step graphs ---------------------------------------------------------------------
// cuDNN's legacy calls and cuBLAS (with its preset workspace) only launch kernels on the handle's
// stream once their algorithms and workspaces are settled, so a captured step replays as is.

void CudnnBackend::graph_begin_capture() {
  PCNN_CHECK(!capturing_, "cudnn: graph_begin_capture called twice without graph_end_capture");
  PCNN_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the old graph may still be running
  if (graph_exec_) PCNN_CUDA_CHECK(cudaGraphExecDestroy(graph_exec_));
  if (graph_) PCNN_CUDA_CHECK(cudaGraphDestroy(graph_));
  graph_exec_ = nullptr;
  graph_ = nullptr;
  free_retired();  // only the old graph could still read these
  // Thread-local: other threads (a data loader, say) may keep calling CUDA meanwhile.
  PCNN_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  capturing_ = true;
}

// Ends a capture that cannot complete, so the stream accepts ordinary work again.
void CudnnBackend::abandon_capture() noexcept {
  if (!capturing_) return;
  capturing_ = false;
  cudaGraph_t abandoned = nullptr;
  cudaStreamEndCapture(stream_, &abandoned);
  if (abandoned) cudaGraphDestroy(abandoned);
  cudaGetLastError();  // the capture's own error is not sticky; clear it
}

void CudnnBackend::graph_end_capture() {
  PCNN_CHECK(capturing_, "cudnn: graph_end_capture without graph_begin_capture");
  capturing_ = false;
  cudaGraph_t graph = nullptr;
  const cudaError_t err = cudaStreamEndCapture(stream_, &graph);
  if (err != cudaSuccess) {
    if (graph) cudaGraphDestroy(graph);
    vendor::throw_cuda_error(err, "cudaStreamEndCapture(stream_, &graph)", __FILE__, __LINE__);
  }
  graph_ = graph;
  PCNN_CUDA_CHECK(cudaGraphInstantiate(&graph_exec_, graph_, 0));
}

void CudnnBackend::graph_launch() {
  PCNN_CHECK(graph_exec_, "cudnn: graph_launch before a graph was captured");
  PCNN_CUDA_CHECK(cudaGraphLaunch(graph_exec_, stream_));
}

// ---- registry -------------------------------------------------------------------------------

std::unique_ptr<Backend> create_cudnn_backend(const BackendOptions& opts) {
  return std::make_unique<CudnnBackend>(opts.device);
}

}  // namespace pcnn
