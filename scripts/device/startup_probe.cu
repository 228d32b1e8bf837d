// The floor under any CUDA process's wall time on the GPU machine: how long cuInit, the primary
// context and a first kernel take, with nothing else in the process. Run it under /usr/bin/time:
// the wall time less the printed phases is exec plus the driver's teardown at exit.
// Build and run: nvcc -O2 -arch=sm_90 -o /tmp/startup_probe scripts/device/startup_probe.cu -lcuda
//   /usr/bin/time -f "wall %e" /tmp/startup_probe [exit | reset]
// exit: ends with _Exit (no destructors, no runtime teardown); reset: cudaDeviceReset() first,
// timed, to see how much of the exit is the context's own teardown.
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

__global__ void touch(float* p) { p[0] = 1.f; }

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "startup_probe: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  const double t0 = seconds_now();
  if (cuInit(0) != CUDA_SUCCESS) {
    std::fprintf(stderr, "startup_probe: cuInit failed\n");
    return 1;
  }
  const double t1 = seconds_now();
  if (!ok(cudaFree(nullptr), "context")) return 1;
  const double t2 = seconds_now();
  float* p = nullptr;
  if (!ok(cudaMalloc(&p, 64 << 20), "cudaMalloc")) return 1;
  const double t3 = seconds_now();
  touch<<<1, 1>>>(p);
  if (!ok(cudaDeviceSynchronize(), "first kernel")) return 1;
  const double t4 = seconds_now();
  std::fprintf(stderr, "cuInit %.3f  context %.3f  malloc64M %.3f  first kernel %.3f\n", t1 - t0,
               t2 - t1, t3 - t2, t4 - t3);
  if (std::strcmp(mode, "reset") == 0) {
    const double a = seconds_now();
    if (!ok(cudaDeviceReset(), "reset")) return 1;
    std::fprintf(stderr, "reset %.3f\n", seconds_now() - a);
  }
  if (std::strcmp(mode, "exit") == 0) std::_Exit(0);
  return 0;
}
