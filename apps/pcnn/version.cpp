// The version and commit come from CMake (apps/pcnn/CMakeLists.txt), the backends from the registry.
#include "apps/pcnn/version.hpp"

#include "backends/registry.hpp"

namespace pcnn::cli {

std::string version_text() {
  std::string backends;
  for (const auto& e : compiled_backends()) backends += (backends.empty() ? "" : ", ") + e.name;
  return std::string("pcnn ") + PCNN_VERSION + " (commit " + PCNN_GIT_COMMIT + ")\n" +
         "backends compiled in: " + backends;
}

}  // namespace pcnn::cli
