// The kokkos backend's registry entry. It runs where its Kokkos build puts the default execution
// space: the host flavour on CPU threads, the cuda flavour (PCNN_KOKKOS_FLAVOR=cuda) on the GPU.
#include "backends/registry.hpp"

namespace pcnn {

BackendTraits kokkos_backend_traits() {
  BackendTraits t;
  t.summary = "portable Kokkos kernels (default execution space)";
#ifdef PCNN_KOKKOS_ON_CUDA
  t.kind = BackendKind::Gpu;
#endif
  // Kokkos 3.4 is initialised once per process: a thread-count sweep needs a process per count.
  t.one_setting_per_process = true;
  t.reference = "serial";
  t.compared_with = {"openmp"};  // portable kernels against the hand-written CPU ones
  return t;
}

}  // namespace pcnn
