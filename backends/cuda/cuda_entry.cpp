// The cuda backend's registry entry: hand-written kernels, measured against the vendor libraries
// and the portable kernels; NCCL for data-parallel training where the build found it.
#include "backends/registry.hpp"

namespace pcnn {

#ifdef PCNN_HAVE_NCCL
std::unique_ptr<Collective> create_nccl_collective(const std::vector<Backend*>& replicas);
#endif

BackendTraits cuda_backend_traits() {
  BackendTraits t;
  t.summary = "hand-tuned native CUDA kernels, whole step as a CUDA graph";
  t.kind = BackendKind::Gpu;
  t.reference = "serial";
  t.compared_with = {"cudnn", "kokkos"};
#ifdef PCNN_HAVE_NCCL
  t.collective = "nccl";
  t.create_collective = create_nccl_collective;
#endif
  return t;
}

}  // namespace pcnn
