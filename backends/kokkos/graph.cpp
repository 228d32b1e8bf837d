// Kokkos backend: a training step captured as one CUDA graph from the stream of the execution
// space instance every kernel launches on (kk::exec()), and replayed. Kokkos 3.4 has no stream
// capture support of its own; what makes its launches capturable (light-weight launches, scratch
// grown in the eager first step) and what does not is in notes/tuning-kokkos.md, "Graph capture".
// A capture that fails is ended cleanly and the trainer stays eager; the host build never
// captures.
#include <cstdio>

#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/kokkos_common.hpp"
#include "core/check.hpp"

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

namespace pcnn {

#ifdef KOKKOS_ENABLE_CUDA

namespace {

cudaStream_t stream() { return kk::exec().cuda_stream(); }

void check(cudaError_t err, const char* call) {
  if (err == cudaSuccess) return;
  cudaGetLastError();
  PCNN_CHECK(false, "kokkos: " << call << ": " << cudaGetErrorString(err));
}

}  // namespace

bool KokkosBackend::supports_graphs() const { return true; }

void KokkosBackend::graph_begin_capture() {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  check(cudaStreamIsCapturing(stream(), &status), "cudaStreamIsCapturing");
  PCNN_CHECK(status == cudaStreamCaptureStatusNone,
             "graph_begin_capture: the kokkos stream is already being captured");
  // Thread-local: a call that cannot be captured (an allocation, a synchronisation) made by this
  // thread fails and invalidates the capture instead of silently running outside the graph.
  check(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal),
        "cudaStreamBeginCapture");
}

bool KokkosBackend::graph_end_capture() {
  const cudaStream_t s = stream();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaError_t err = cudaStreamIsCapturing(s, &status);
  cudaGraph_t graph = nullptr;
  if (err == cudaSuccess && status == cudaStreamCaptureStatusNone) {
    err = cudaErrorStreamCaptureUnmatched;  // begin failed: nothing was recorded
  } else if (err == cudaSuccess) {
    err = cudaStreamEndCapture(s, &graph);  // also ends an invalidated capture
  }
  cudaGraphExec_t ready = nullptr;
  if (err == cudaSuccess) err = cudaGraphInstantiate(&ready, graph, 0);
  if (graph) cudaGraphDestroy(graph);  // the executable graph keeps what it needs
  if (err == cudaSuccess) err = cudaGraphUpload(ready, s);  // first replay as fast as the rest
  if (err != cudaSuccess) {
    if (ready) cudaGraphExecDestroy(ready);
    cudaGetLastError();  // capture errors are not sticky; leave none for the next launch
    std::fprintf(stderr,
                 "pcnn: kokkos: the training step could not be captured as a CUDA graph (%s); "
                 "training continues without graphs\n",
                 cudaGetErrorString(err));
    return false;
  }
  release_graph();  // a graph captured before (it may still be replaying)
  graph_ = ready;
  return true;
}

void KokkosBackend::graph_launch() {
  PCNN_CHECK(graph_, "graph_launch: no graph has been captured");
  check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph_), stream()), "cudaGraphLaunch");
}

void KokkosBackend::release_graph() noexcept {
  if (!graph_) return;
  cudaStreamSynchronize(stream());  // its replays finish before it goes
  cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph_));
  graph_ = nullptr;
  for (void* p : retired_) deallocate(p);
  retired_.clear();
}

#else  // host spaces: kernels run as they are called, there is nothing to capture

namespace {
[[noreturn]] void no_graphs() { throw Error("kokkos: graphs need Kokkos' Cuda space"); }
}  // namespace

bool KokkosBackend::supports_graphs() const { return false; }
void KokkosBackend::graph_begin_capture() { no_graphs(); }
bool KokkosBackend::graph_end_capture() { no_graphs(); }
void KokkosBackend::graph_launch() { no_graphs(); }
void KokkosBackend::release_graph() noexcept {}

#endif

}  // namespace pcnn
