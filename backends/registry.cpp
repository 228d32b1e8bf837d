// The registry: CMake's pcnn_add_backend(NAME) defines PCNN_HAVE_<NAME> for each backend built.
#include "backends/registry.hpp"

#include "core/check.hpp"

namespace pcnn {

#ifdef PCNN_HAVE_CUDA
std::unique_ptr<Backend> create_cuda_backend(const BackendOptions&);
#endif
#ifdef PCNN_HAVE_CUDNN
std::unique_ptr<Backend> create_cudnn_backend(const BackendOptions&);
#endif
#ifdef PCNN_HAVE_KOKKOS
std::unique_ptr<Backend> create_kokkos_backend(const BackendOptions&);
#endif
#ifdef PCNN_HAVE_OPENMP
std::unique_ptr<Backend> create_openmp_backend(const BackendOptions&);
#endif
std::unique_ptr<Backend> create_serial_backend(const BackendOptions&);

const std::vector<BackendEntry>& compiled_backends() {
  static const std::vector<BackendEntry> list = {
#ifdef PCNN_HAVE_CUDA
      {"cuda", "hand-tuned native CUDA kernels, whole step as a CUDA graph", create_cuda_backend},
#endif
#ifdef PCNN_HAVE_CUDNN
      {"cudnn", "vendor libraries: cuDNN convolutions, cuBLAS GEMM", create_cudnn_backend},
#endif
#ifdef PCNN_HAVE_OPENMP
      {"openmp", "multi-core CPU with OpenMP", create_openmp_backend},
#endif
#ifdef PCNN_HAVE_KOKKOS
      {"kokkos", "portable Kokkos kernels (default execution space)", create_kokkos_backend},
#endif
      {"serial", "sequential reference loops (the ground truth)", create_serial_backend},
  };
  return list;
}

const std::vector<std::string>& known_backend_names() {
  static const std::vector<std::string> names = {"serial", "openmp", "kokkos", "cuda", "cudnn"};
  return names;
}

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opts) {
  for (const auto& e : compiled_backends())
    if (e.name == name) return e.create(opts);
  for (const auto& known : known_backend_names())
    PCNN_CHECK(known != name, "backend '" << name
                                          << "' is not compiled into this build (reconfigure with "
                                             "-DPCNN_ENABLE_"
                                          << (name == "cudnn" ? "CUDNN" : name == "cuda" ? "CUDA"
                                              : name == "kokkos" ? "KOKKOS" : "OPENMP")
                                          << "=ON)");
  std::string all;
  for (const auto& e : compiled_backends()) all += (all.empty() ? "" : ", ") + e.name;
  throw Error("unknown backend '" + name + "' (compiled in: " + all + ")");
}

std::string unusable_reason(const std::string& name, const BackendOptions& opts) {
  try {
    make_backend(name, opts);
    return "";
  } catch (const Unavailable& e) {
    return e.what();
  }
}

std::string fastest_usable_backend(const BackendOptions& opts) {
  for (const auto& e : compiled_backends())
    if (unusable_reason(e.name, opts).empty()) return e.name;
  return "serial";
}

}  // namespace pcnn
