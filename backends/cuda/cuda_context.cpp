// The GPU context: device selection, the stream, graph capture and replay, scratch retirement and
// the reduction counters.
#include "backends/cuda/cuda_context.hpp"

#include <cstdlib>
#include <string>
#include <utility>

#include "backends/cuda/cuda_check.hpp"

namespace pcnn::cuda {

namespace {

// A measuring aid's switch: the variable `name` set to one digit in [lo, hi] sets `value`; unset
// or anything else leaves the default.
void read_digit(const char* name, int lo, int hi, int& value) {
  const char* v = std::getenv(name);
  if (v && v[0] >= '0' + lo && v[0] <= '0' + hi && !v[1]) value = v[0] - '0';
}

}  // namespace

void* malloc_device(size_t bytes) {
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // out of memory is not sticky, but the next launch check would see it
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    cudaGetLastError();
    const auto mib = [](size_t b) { return std::to_string((b + (1 << 20) - 1) >> 20) + " MiB"; };
    throw OutOfMemory("GPU out of memory: asked for " + mib(bytes) + ", " + mib(free_bytes) +
                          " free of " + mib(total_bytes),
                      bytes);
  }
  if (err != cudaSuccess) {
    cudaGetLastError();
    const std::string call = "cudaMalloc of " + std::to_string(bytes) + " bytes";
    throw_cuda_error(err, call.c_str(), __FILE__, __LINE__);
  }
  return p;
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
  try {
    PCNN_CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp prop{};
    PCNN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    // The driver and runtime beside the device's name, so that result files (bench.json) say
    // what the numbers were taken with: "NVIDIA H200 (CUDA driver 12.8, runtime 12.4)".
    int driver = 0, runtime = 0;
    PCNN_CUDA_CHECK(cudaDriverGetVersion(&driver));
    PCNN_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    const auto version = [](int v) {
      return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
    };
    name_ = std::string(prop.name) + " (CUDA driver " + version(driver) + ", runtime " +
            version(runtime) + ")";
    sm_count_ = prop.multiProcessorCount;
    smem_optin_floats_ = int(prop.sharedMemPerBlockOptin / sizeof(float));
    const char* pdl = std::getenv("PCNN_DEPENDENT_LAUNCH");
    dependent_launches_ = prop.major >= 9 && !(pdl && std::string(pdl) == "0");
    read_digit("PCNN_CONV_SPLIT", 0, 1, forced_conv_split_);
    read_digit("PCNN_MMA", 0, 1, mma_);
    read_digit("PCNN_CONV_LANES", 0, 2, lanes_);
    read_digit("PCNN_GEMM_VEC", 0, 2, vec_tiles_);
    if (const char* g = std::getenv("PCNN_ARGMAX_GROUP")) {
      const std::string v = g;
      if (v == "8" || v == "16" || v == "32") argmax_group_ = std::stoi(v);
    }
    read_digit("PCNN_CLUSTER_SUMS", 0, 2, cluster_sums_);
    int clusters = 0;
    PCNN_CUDA_CHECK(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device_));
    if (!clusters) cluster_sums_ = 0;
    read_digit("PCNN_CONV_STRIP", 0, 2, strip_);
    read_digit("PCNN_CONV_ARGMAX", 0, 2, argmax_);
    read_digit("PCNN_LOSS16", 0, 1, loss16_);
    const char* store = std::getenv("PCNN_STRIP_STORE");
    strip_store_ = !(store && std::string(store) == "0");
    read_digit("PCNN_DX_ROWS", 1, 2, dx_rows_);
    read_digit("PCNN_DX_IMAGES", 1, 8, dx_images_);
    const char* dw_threads = std::getenv("PCNN_CONV_DW_THREADS");
    if (dw_threads && (std::string(dw_threads) == "128" || std::string(dw_threads) == "256" ||
                       std::string(dw_threads) == "512"))
      conv_dw_threads_ = std::stoi(dw_threads);
    const char* sum_loads = std::getenv("PCNN_SUM_LOADS");
    if (sum_loads && std::string(sum_loads) == "8") sum_loads_ = 8;
    read_digit("PCNN_CONV_DW_BLOCKS", 0, 5, dw_plan_);
    const char* log = std::getenv("PCNN_CUDA_LOG");
    log_choices_ = log && std::string(log) == "1";
    PCNN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    reserve_placement_pad();
    counters_ = static_cast<unsigned*>(malloc_device(kCounters * sizeof(unsigned)));
    PCNN_CUDA_CHECK(cudaMemsetAsync(counters_, 0, kCounters * sizeof(unsigned), stream_));
    PCNN_CUDA_CHECK(cudaStreamSynchronize(stream_));
  } catch (...) {
    release();
    throw;
  }
}

CudaContext::~CudaContext() { release(); }

const bool* CudaContext::timed_choice(Choice what, const ChoiceKey& key) const {
  const auto it = choices_.find({what, key});
  return it == choices_.end() ? nullptr : &it->second;
}

// PCNN_PAD_DEVICE_MEMORY=BYTES: that much device memory is taken before anything else, so every
// later buffer lands elsewhere. A measuring aid: on the H200 the same binary's cudnn step moved by
// up to 15 % with this shift alone (notes/measurements.md), so a before/after comparison should
// look at several placements.
void CudaContext::reserve_placement_pad() {
  const char* text = std::getenv("PCNN_PAD_DEVICE_MEMORY");
  if (!text || !*text) return;
  char* end = nullptr;
  const unsigned long long bytes = std::strtoull(text, &end, 10);
  PCNN_CHECK(end && *end == '\0',
             "PCNN_PAD_DEVICE_MEMORY must be a number of bytes, not '" << text << "'");
  if (bytes) pad_ = malloc_device(bytes);
}

void CudaContext::release() noexcept {
  // Errors are ignored on purpose: a destructor must not throw, and after a sticky error every
  // call below fails anyway. Owners of other scratch (cudnn) have freed theirs by now.
  cudaSetDevice(device_);
  abandon_capture();
  if (stream_) cudaStreamSynchronize(stream_);
  if (graph_) cudaGraphExecDestroy(graph_);
  graph_ = nullptr;
  free_retired();
  cudaFree(counters_);
  counters_ = nullptr;
  cudaFree(pad_);
  pad_ = nullptr;
  if (stream_) cudaStreamDestroy(stream_);
  stream_ = nullptr;
}

void CudaContext::bind() const {
  int current = -1;
  PCNN_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device_) PCNN_CUDA_CHECK(cudaSetDevice(device_));
}

namespace {

// PCNN_GRAPH_DOT=PREFIX: each captured step graph is written as PREFIX.N.dot
// (cudaGraphDebugDotPrint, verbose: every node's kernel and launch shape), to compare two builds.
void write_graph_dot_if_asked(cudaGraph_t graph) {
  const char* prefix = std::getenv("PCNN_GRAPH_DOT");
  if (!prefix || !*prefix || !graph) return;
  static int written = 0;
  const std::string path = std::string(prefix) + "." + std::to_string(written++) + ".dot";
  if (cudaGraphDebugDotPrint(graph, path.c_str(), cudaGraphDebugDotFlagsVerbose) != cudaSuccess)
    cudaGetLastError();  // a debugging aid: never fails the run
}

}  // namespace

// ---- whole-step graphs ------------------------------------------------------------------

int CudaContext::argmax_group(int chunks) const {
  if (argmax_group_ > 0) return argmax_group_;
  int g = 8;
  while (g * g < chunks) g += 8;
  return g;
}

int CudaContext::argmax_cluster(int chunks) const {
  if (cluster_sums_ == 0 || (cluster_sums_ == 1 && 2 * chunks > sm_count_)) return 1;
  for (int c = 8; c > 1; c /= 2)
    if (chunks % c == 0) return c;
  return 1;
}

bool CudaContext::capturing() const {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  PCNN_CUDA_CHECK(cudaStreamIsCapturing(stream_, &status));
  return status != cudaStreamCaptureStatusNone;
}

void CudaContext::begin_capture() {
  PCNN_CHECK(!capturing(), "graph_begin_capture: the stream is already being captured");
  PCNN_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
}

void CudaContext::end_capture() {
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
  if (ended != cudaSuccess) {
    if (graph) cudaGraphDestroy(graph);
    throw_cuda_error(ended, "cudaStreamEndCapture", __FILE__, __LINE__);
  }
  write_graph_dot_if_asked(graph);
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);  // the executable graph keeps what it needs
  PCNN_CUDA_CHECK(instantiated);
  if (cudaGraphExec_t old = std::exchange(graph_, exec)) {
    // The old graph may still be replaying; once it is gone nothing reads the retired scratch
    // (the new one was captured after they were retired).
    PCNN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    PCNN_CUDA_CHECK(cudaGraphExecDestroy(old));
    free_retired();
  }
  PCNN_CUDA_CHECK(cudaGraphUpload(graph_, stream_));
}

void CudaContext::launch_graph() {
  PCNN_CHECK(graph_, "graph_launch: no graph has been captured");
  PCNN_CUDA_CHECK(cudaGraphLaunch(graph_, stream_));
}

void CudaContext::abandon_capture() noexcept {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (!stream_ || cudaStreamIsCapturing(stream_, &status) != cudaSuccess ||
      status == cudaStreamCaptureStatusNone)
    return;
  cudaGraph_t abandoned = nullptr;
  cudaStreamEndCapture(stream_, &abandoned);
  if (abandoned) cudaGraphDestroy(abandoned);
  cudaGetLastError();  // the failed capture's error is not sticky; clear it
}

// ---- scratch ------------------------------------------------------------------------------

float* CudaContext::scratch(size_t floats) {
  return static_cast<float*>(scratch_.ensure(floats * sizeof(float), floats / 2 * sizeof(float)));
}

float* CudaContext::scratch_aux(size_t floats) {
  return static_cast<float*>(scratch_aux_.ensure(floats * sizeof(float), floats / 2 * sizeof(float)));
}

float* CudaContext::staging16(size_t floats) {
  const size_t bytes = floats * sizeof(float);
  return static_cast<float*>(staging16_.ensure(bytes, bytes / 2));
}

unsigned* CudaContext::counters(size_t count) {
  PCNN_CHECK(count <= kCounters, "cuda backend: " << count << " reduction counters asked for, "
                                                  << kCounters << " exist");
  return counters_;
}

void CudaContext::retire(void* buffer) {
  if (!buffer) return;
  PCNN_CUDA_CHECK(cudaStreamSynchronize(stream_));  // queued work may still use it
  if (graph_) {
    retired_.push_back(buffer);
  } else {
    PCNN_CUDA_CHECK(cudaFree(buffer));
  }
}

void CudaContext::free_retired() noexcept {
  for (void* p : retired_) cudaFree(p);
  retired_.clear();
}

}  // namespace pcnn::cuda
