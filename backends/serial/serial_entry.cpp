// The serial backend's registry entry: the ground truth every other backend is tested against.
#include "backends/registry.hpp"

namespace pcnn {

BackendTraits serial_backend_traits() {
  BackendTraits t;
  t.summary = "sequential reference loops (the ground truth)";
  t.sequential = true;  // no reference: it is the reference
  return t;
}

}  // namespace pcnn
