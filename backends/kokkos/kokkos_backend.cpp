// Kokkos backend: process-wide Kokkos initialisation, identity, memory and copies, and the
// factory the registry calls.
#include "backends/kokkos/kokkos_backend.hpp"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

#include "backends/kokkos/kokkos_common.hpp"
#include "backends/registry.hpp"
#include "core/check.hpp"

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

namespace pcnn {

using namespace kk;

namespace {

// Kokkos 3.4 can be initialised once per process and never again after finalize, while the
// registry creates and drops backends freely (probing). So: initialise on the first create,
// finalise from atexit, and let every later create reuse the running instance.
std::mutex g_kokkos_mutex;
bool g_finalized = false;

#ifdef KOKKOS_ENABLE_CUDA
// The backend's stream and the Kokkos instance on it: created after Kokkos::initialize, released
// before Kokkos::finalize (an instance outliving Kokkos would finalise into a dead runtime).
cudaStream_t g_stream = nullptr;
std::unique_ptr<Kokkos::Cuda> g_exec;

void create_exec_instance() {
  const cudaError_t err = cudaStreamCreate(&g_stream);  // blocking, like the work it replaces
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw Unavailable(std::string("Kokkos Cuda: cannot create a stream (") +
                      cudaGetErrorString(err) + ")");
  }
  g_exec = std::make_unique<Kokkos::Cuda>(g_stream);
  // Whoever finalises Kokkos (our atexit, or a host program that initialised it) drops it first.
  Kokkos::push_finalize_hook([] {
    if (!g_exec) return;
    g_exec->fence();
    g_exec.reset();
    cudaStreamDestroy(g_stream);
    g_stream = nullptr;
  });
}
#endif

void finalize_kokkos() {
  std::lock_guard<std::mutex> lock(g_kokkos_mutex);
  if (Kokkos::is_initialized()) Kokkos::finalize();
  g_finalized = true;
}

void ensure_kokkos(const BackendOptions& opts) {
  std::lock_guard<std::mutex> lock(g_kokkos_mutex);
  if (Kokkos::is_initialized()) {  // by an earlier create, or by the host program
#ifdef KOKKOS_ENABLE_CUDA
    if (!g_exec) create_exec_instance();
#endif
    return;
  }
  if (g_finalized) throw Unavailable("Kokkos was already finalised in this process");
#ifdef KOKKOS_ENABLE_CUDA
  // Kokkos aborts the process when it finds no GPU: ask the runtime first.
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0)
    throw Unavailable(std::string("Kokkos Cuda: no usable CUDA device (") +
                      (err != cudaSuccess ? cudaGetErrorString(err) : "none found") + ")");
  if (opts.device < 0 || opts.device >= devices)
    throw Unavailable("Kokkos Cuda: no CUDA device " + std::to_string(opts.device) + " (" +
                      std::to_string(devices) + " present)");
#endif
  Kokkos::InitArguments args;
  args.num_threads = opts.threads > 0 ? opts.threads : -1;  // -1: Kokkos' (OpenMP's) default
  args.device_id = opts.device;
  args.disable_warnings = true;  // no OMP_PROC_BIND advice on every start
  Kokkos::initialize(args);
  std::atexit(finalize_kokkos);
#ifdef KOKKOS_ENABLE_CUDA
  create_exec_instance();
#endif
}

}  // namespace

namespace kk {

ExecSpace exec() {
#ifdef KOKKOS_ENABLE_CUDA
  // Set once under the mutex by the first create, before any backend exists to launch.
  return *g_exec;
#else
  return ExecSpace();
#endif
}

}  // namespace kk

KokkosBackend::KokkosBackend() = default;

KokkosBackend::~KokkosBackend() {
  // Memory still held by callers is returned too: a dropped backend leaks nothing.
  if (!Kokkos::is_initialized()) return;  // after finalize there is nothing left to free
  release_graph();
  for (auto& entry : raw_of_) Kokkos::kokkos_free<MemSpace>(entry.second);
  raw_of_.clear();
}

std::string KokkosBackend::device_name() const {
#ifdef KOKKOS_ENABLE_CUDA
  if (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    return std::string("Kokkos Cuda, ") + exec().cuda_device_prop().name;
  }
#endif
  const int threads = ExecSpace().concurrency();
  return std::string("Kokkos ") + ExecSpace::name() + ", " + std::to_string(threads) +
         (threads == 1 ? " thread" : " threads");
}

bool KokkosBackend::is_host_memory() const {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
}

void* KokkosBackend::allocate_memory(size_t bytes) {
  // kokkos_malloc puts a header in front of the data (64- or 128-byte aligned); the contract
  // promises 256, so allocate a little more and remember the original pointer.
  void* raw = nullptr;
  try {  // Kokkos reports a failed allocation as a std::bad_alloc (RawMemoryAllocationFailure)
    raw = Kokkos::kokkos_malloc<MemSpace>("pcnn::kokkos_buffer", bytes + 256);
  } catch (const std::bad_alloc&) {
  }
  if (!raw)
    throw OutOfMemory(std::string("kokkos: out of memory in ") + MemSpace::name() +
                          ": asked for " + std::to_string((bytes + (1 << 20) - 1) >> 20) +
                          " MiB",
                      bytes);
  void* aligned = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(raw) + 255) &
                                          ~uintptr_t(255));
  std::lock_guard<std::mutex> lock(mutex_);
  raw_of_[aligned] = raw;
  return aligned;
}

void KokkosBackend::free_memory(void* ptr) {
  if (!ptr) return;
  void* raw = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = raw_of_.find(ptr);
    PCNN_CHECK(it != raw_of_.end(), "kokkos: deallocate of a pointer this backend did not allocate");
    raw = it->second;
    raw_of_.erase(it);
  }
  if (Kokkos::is_initialized()) Kokkos::kokkos_free<MemSpace>(raw);
}

void KokkosBackend::upload(void* dst, const void* src, size_t bytes) {
  PCNN_KK_REGION(upload);
  if (!bytes) return;
  Kokkos::deep_copy(DeviceView<char>(static_cast<char*>(dst), bytes),
                    HostView<const char>(static_cast<const char*>(src), bytes));
}

void KokkosBackend::download(void* dst, const void* src, size_t bytes) {
  PCNN_KK_REGION(download);
  if (!bytes) return;
  // deep_copy without an execution space fences first: pending kernels finish before the read.
  Kokkos::deep_copy(HostView<char>(static_cast<char*>(dst), bytes),
                    DeviceView<const char>(static_cast<const char*>(src), bytes));
}

void KokkosBackend::copy(void* dst, const void* src, size_t bytes) {
  PCNN_KK_REGION(copy);
  if (!bytes || dst == src) return;
  Kokkos::deep_copy(exec(), DeviceView<char>(static_cast<char*>(dst), bytes),
                    DeviceView<const char>(static_cast<const char*>(src), bytes));
}

// dst[0..n) = value
void KokkosBackend::fill(float* dst, float value, size_t n) {
  PCNN_KK_REGION(fill);
  Kokkos::parallel_for("pcnn::fill", range(n), KOKKOS_LAMBDA(size_t i) { dst[i] = value; });
}

void KokkosBackend::synchronize() { Kokkos::fence(); }

float* KokkosBackend::workspace(Slot slot, size_t floats) {
  if (floats == 0) return nullptr;
  if (slot_size_[slot] < floats) {
    Kokkos::fence();  // kernels still reading the old buffer finish first
    // A captured graph may still point into it (an evaluation pass with a larger batch grows a
    // slot between two replays): kept until that graph goes (release_graph).
    if (graph_)
      retired_.push_back(slot_ptr_[slot]);
    else
      deallocate(slot_ptr_[slot]);
    slot_ptr_[slot] = nullptr;
    slot_size_[slot] = 0;
    slot_ptr_[slot] = static_cast<float*>(allocate(floats * sizeof(float)));
    slot_size_[slot] = floats;
  }
  return slot_ptr_[slot];
}

std::unique_ptr<Backend> create_kokkos_backend(const BackendOptions& opts) {
  ensure_kokkos(opts);
  return std::make_unique<KokkosBackend>();
}

}  // namespace pcnn
