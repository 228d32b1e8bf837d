// The one list of backends compiled into this build, in order of preference (fastest first).
// Tests, the bench and the CLI name backends only through it. "Compiled in" and "usable here"
// differ: creating a backend that cannot run here (no GPU) throws pcnn::Unavailable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace pcnn {

struct BackendOptions {
  int threads = 0;  // CPU backends: worker threads (0 = all cores)
  int device = 0;   // GPU backends: device ordinal
};

using BackendFactory = std::unique_ptr<Backend> (*)(const BackendOptions&);

struct BackendEntry {
  std::string name;
  std::string summary;
  BackendFactory create;
};

// Backends compiled in, fastest first.
const std::vector<BackendEntry>& compiled_backends();

// Names every backend this project knows, compiled in or not (for error messages).
const std::vector<std::string>& known_backend_names();

// Creates a backend by name. Throws Error for an unknown or not-compiled-in name, Unavailable when
// it is compiled in but cannot run here.
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opts = {});

// Why a compiled-in backend cannot run here; empty when it can (creates and drops one).
std::string unusable_reason(const std::string& name, const BackendOptions& opts = {});

// The first compiled-in backend that is usable here.
std::string fastest_usable_backend(const BackendOptions& opts = {});

}  // namespace pcnn
