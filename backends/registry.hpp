// The one list of backends, and what each one is. Tests, the bench and the CLI name backends only
// through it, and ask its traits (CPU or GPU, what it is compared with, its all-reduce) instead of
// comparing names. "Known", "compiled in" and "usable here" differ: every backend of the project
// is known (its traits too); those switched on in CMake are compiled in; creating one that cannot
// run here (no GPU) throws pcnn::Unavailable.
//
// Where the list comes from: one pcnn_backend() line per backend in CMakeLists.txt (the order is
// the order of preference), and in each folder backends/<name>/<name>_entry.cpp, which defines
// `BackendTraits <name>_backend_traits()`. CMake generates the list (backends/backend_list.cpp.in)
// and adds the option and, where compiled in, the factory create_<name>_backend().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace pcnn {

class Collective;

struct BackendOptions {
  int threads = 0;  // CPU backends: worker threads (0 = all cores)
  int device = 0;   // GPU backends: device ordinal
};

using BackendFactory = std::unique_ptr<Backend> (*)(const BackendOptions&);
using CollectiveFactory = std::unique_ptr<Collective> (*)(const std::vector<Backend*>& replicas);

enum class BackendKind { Cpu, Gpu };      // where its buffers live and its kernels run
const char* to_string(BackendKind kind);  // "cpu", "gpu"

// What a backend is, as its folder's <name>_entry.cpp states it.
struct BackendTraits {
  std::string summary;  // one line: what it is
  BackendKind kind = BackendKind::Cpu;
  // One CPU thread whatever is asked: no thread count in labels, no thread sweeps.
  bool sequential = false;
  // Cannot be set up twice in one process with different settings (Kokkos 3.4): a thread-count
  // sweep runs each count in a child process.
  bool one_setting_per_process = false;
  // Two runs with the same settings give the same bits (no atomics, no timed algorithm choice).
  bool bitwise_repeatable = true;
  // Its results are tested against this backend's; "" = it is the ground truth.
  std::string reference;
  // Its head-to-head partners in the bench tables (this one's speed against each of theirs).
  std::vector<std::string> compared_with;
  // Its all-reduce for data-parallel training, and the factory of it (null: the host one).
  std::string collective = "host";
  CollectiveFactory create_collective = nullptr;
};

// A backend of the project: its traits, and what CMake knows of it.
struct BackendEntry : BackendTraits {
  std::string name;                 // the folder under backends/, the --backend name
  std::string cmake_option;         // the option that builds it ("" = always built)
  std::string not_built_why;        // why it is not compiled in ("" = it is)
  BackendFactory create = nullptr;  // null: not compiled into this build
};

// Every backend the project knows, compiled in or not, in order of preference (fastest first).
const std::vector<BackendEntry>& known_backends();
// Their names (for error messages and help texts).
const std::vector<std::string>& known_backend_names();
// The ones compiled in, in the same order.
const std::vector<BackendEntry>& compiled_backends();

// The entry of a known backend, or nullptr (a report from another build may name any backend).
const BackendEntry* find_backend(const std::string& name);
// The entry of a known backend; throws Error naming the compiled-in ones for an unknown name.
const BackendEntry& backend_entry(const std::string& name);
// The ground truth every backend is tested against (the entry with no reference).
const BackendEntry& reference_backend();

// Creates a backend by name. Throws Error for an unknown or not-compiled-in name, Unavailable when
// it is compiled in but cannot run here.
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opts = {});

// Why a known backend cannot run here (not compiled in, or Unavailable); empty when it can.
// Creates and drops one.
std::string unusable_reason(const std::string& name, const BackendOptions& opts = {});

// The first compiled-in backend that is usable here.
std::string fastest_usable_backend(const BackendOptions& opts = {});

// The traits in one line: "gpu; compared with cudnn, kokkos; all-reduce nccl; PCNN_ENABLE_CUDA".
std::string describe_traits(const BackendEntry& e);

}  // namespace pcnn
