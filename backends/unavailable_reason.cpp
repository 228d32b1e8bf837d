// The CUDA runtime answers "driver version is insufficient" both when the driver is too old and
// when there is none at all, so the driver library is asked directly (through dlopen: this file
// builds without CUDA, and a machine without the driver has no libcuda to link against).
#include "backends/unavailable_reason.hpp"

#include <dlfcn.h>

#include "backends/registry.hpp"

namespace pcnn {

namespace {
struct GpuDriver {
  bool found = false;
  int driver_version = 0;   // the newest CUDA the driver supports, as 1000*major + 10*minor
  int runtime_version = 0;  // the CUDA runtime this program was built with (0: not loaded)
  int devices = -1;         // -1: not known
};

GpuDriver probe_gpu_driver() {
  GpuDriver d;
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return d;
  d.found = true;
  using IntOut = int (*)(int*);
  using Init = int (*)(unsigned);
  if (auto version = reinterpret_cast<IntOut>(dlsym(lib, "cuDriverGetVersion")))
    version(&d.driver_version);
  auto init = reinterpret_cast<Init>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<IntOut>(dlsym(lib, "cuDeviceGetCount"));
  if (init && count) {
    const int status = init(0);
    if (status == 100) d.devices = 0;  // CUDA_ERROR_NO_DEVICE
    else if (status != 0 || count(&d.devices) != 0) d.devices = -1;
  }
  // The runtime this build links: static (its version known at build time), or shared (in
  // this process when a CUDA backend is compiled in).
#ifdef PCNN_CUDART_VERSION
  d.runtime_version = PCNN_CUDART_VERSION;
#endif
  if (auto runtime = reinterpret_cast<IntOut>(dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion")))
    runtime(&d.runtime_version);
  dlclose(lib);
  return d;
}

std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

bool mentions_cuda(const std::string& s) {
  return s.find("CUDA") != std::string::npos || s.find("cuda") != std::string::npos;
}
}  // namespace

std::string unavailable_reason(const std::string& backend, const std::string& what) {
  const std::string prefix = backend + ": ";
  const std::string reason = what.compare(0, prefix.size(), prefix) == 0
                                 ? what.substr(prefix.size())
                                 : what;
  const BackendEntry* entry = find_backend(backend);
  const bool gpu = entry && entry->kind == BackendKind::Gpu;
  if (!gpu && !mentions_cuda(reason)) return reason;
  const GpuDriver d = probe_gpu_driver();
  if (!d.found) return "no NVIDIA driver is installed here (libcuda.so.1 not found)";
  if (d.runtime_version > d.driver_version)
    return "the NVIDIA driver is too old: it supports CUDA " + cuda_version(d.driver_version) +
           ", this build needs CUDA " + cuda_version(d.runtime_version) + " (update the driver)";
  if (d.devices == 0)
    return "no NVIDIA GPU found (the driver, for CUDA " + cuda_version(d.driver_version) +
           ", is installed)";
  return reason;
}

}  // namespace pcnn
