// The openmp backend's registry entry: multi-core CPU, measured against the sequential loops.
#include "backends/registry.hpp"

namespace pcnn {

BackendTraits openmp_backend_traits() {
  BackendTraits t;
  t.summary = "multi-core CPU with OpenMP";
  t.reference = "serial";
  t.compared_with = {"serial"};  // what threads buy over one core
  return t;
}

}  // namespace pcnn
