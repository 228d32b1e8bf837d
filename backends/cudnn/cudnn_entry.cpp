// The cudnn backend's registry entry: the vendor libraries, the yardstick the cuda backend's
// hand-written kernels are measured against.
#include "backends/registry.hpp"

namespace pcnn {

BackendTraits cudnn_backend_traits() {
  BackendTraits t;
  t.summary = "cuda with library kernels: cuDNN convolutions, pooling, bias, batchnorm; cuBLAS GEMM";
  t.kind = BackendKind::Gpu;
  t.reference = "serial";
  // cudnnFind times the algorithms on first use, and some of them sum with atomics.
  t.bitwise_repeatable = false;
  return t;
}

}  // namespace pcnn
