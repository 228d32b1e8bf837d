// The registry: the list CMake generates (backend_list.cpp.in), and the questions asked of it.
// No backend is named here: adding one touches its folder and one line of CMakeLists.txt.
#include "backends/registry.hpp"

#include "core/check.hpp"

namespace pcnn {

// Generated from the pcnn_backend() lines of CMakeLists.txt, in their order.
std::vector<BackendEntry> declared_backends();

const char* to_string(BackendKind kind) { return kind == BackendKind::Gpu ? "gpu" : "cpu"; }

const std::vector<BackendEntry>& known_backends() {
  static const std::vector<BackendEntry> list = declared_backends();
  return list;
}

const std::vector<std::string>& known_backend_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& e : known_backends()) out.push_back(e.name);
    return out;
  }();
  return names;
}

const std::vector<BackendEntry>& compiled_backends() {
  static const std::vector<BackendEntry> list = [] {
    std::vector<BackendEntry> out;
    for (const auto& e : known_backends())
      if (e.create) out.push_back(e);
    return out;
  }();
  return list;
}

const BackendEntry* find_backend(const std::string& name) {
  for (const auto& e : known_backends())
    if (e.name == name) return &e;
  return nullptr;
}

const BackendEntry& backend_entry(const std::string& name) {
  if (const BackendEntry* e = find_backend(name)) return *e;
  std::string all;
  for (const auto& e : compiled_backends()) all += (all.empty() ? "" : ", ") + e.name;
  throw Error("unknown backend '" + name + "' (compiled in: " + all + ")");
}

const BackendEntry& reference_backend() {
  for (const auto& e : known_backends())
    if (e.reference.empty()) return e;
  throw Error("no backend is the ground truth (every registry entry names a reference)");
}

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opts) {
  const BackendEntry& e = backend_entry(name);
  PCNN_CHECK(e.create, "backend '" << name << "' is not compiled into this build ("
                                   << e.not_built_why << ")");
  return e.create(opts);
}

std::string unusable_reason(const std::string& name, const BackendOptions& opts) {
  const BackendEntry& e = backend_entry(name);
  if (!e.create) return "not compiled into this build (" + e.not_built_why + ")";
  try {
    e.create(opts);
    return "";
  } catch (const Unavailable& u) {
    return u.what();
  }
}

std::string fastest_usable_backend(const BackendOptions& opts) {
  for (const auto& e : compiled_backends())
    if (unusable_reason(e.name, opts).empty()) return e.name;
  return reference_backend().name;
}

std::string describe_traits(const BackendEntry& e) {
  std::string s = to_string(e.kind);
  if (e.sequential) s += ", one thread";
  if (!e.bitwise_repeatable) s += ", not bitwise repeatable";
  if (e.reference.empty()) s += "; the ground truth";
  if (!e.compared_with.empty()) {
    s += "; compared with ";
    for (size_t i = 0; i < e.compared_with.size(); ++i) s += (i ? ", " : "") + e.compared_with[i];
  }
  s += "; all-reduce " + e.collective;
  s += "; " + (e.cmake_option.empty() ? std::string("always built") : e.cmake_option);
  return s;
}

}  // namespace pcnn
