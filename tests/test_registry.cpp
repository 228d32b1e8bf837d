// The registry describes its backends: every entry's traits hang together (names unique, the
// backends it names exist, a factory exactly where compiled in), and what a backend object says
// of itself agrees with its entry. The CTest `backend_names` (cmake/CheckBackendNames.cmake)
// checks the other half: no source outside backends/ and tests/ compares a backend's name.
#include <algorithm>
#include <set>

#include "backends/collective.hpp"
#include "backends/registry.hpp"
#include "core/check.hpp"
#include "tests/harness.hpp"

namespace pcnn::test {

namespace {
bool known(const std::string& name) { return find_backend(name) != nullptr; }
}  // namespace

TEST_SUITE("core") {

TEST_CASE("registry: every entry's traits are consistent") {
  std::set<std::string> names;
  int ground_truths = 0;
  for (const BackendEntry& e : known_backends()) {
    INFO("backend " << e.name);
    CHECK(!e.name.empty());
    CHECK(names.insert(e.name).second);  // unique
    CHECK(!e.summary.empty());
    // The reference is known and compiled in wherever this one is: tests need both.
    if (e.reference.empty()) {
      ++ground_truths;
      CHECK(e.cmake_option.empty());  // the ground truth is always built
      CHECK(!e.one_setting_per_process);
    } else {
      REQUIRE(known(e.reference));
      CHECK(e.reference != e.name);
      CHECK((!e.create || backend_entry(e.reference).create));
    }
    std::set<std::string> partners;
    for (const std::string& other : e.compared_with) {
      CHECK(known(other));
      CHECK(other != e.name);
      CHECK(partners.insert(other).second);
    }
    // An option builds it, or it is always built; a factory exactly where compiled in.
    CHECK((e.cmake_option.empty() || e.cmake_option.rfind("PCNN_ENABLE_", 0) == 0));
    CHECK((e.create != nullptr) == e.not_built_why.empty());
    if (!e.create) CHECK(!e.cmake_option.empty());
    CHECK((e.create_collective != nullptr) == (e.collective != "host"));
    CHECK((!e.sequential || e.kind == BackendKind::Cpu));
    CHECK(!describe_traits(e).empty());
  }
  CHECK(ground_truths == 1);
  CHECK((reference_backend().create != nullptr));
  CHECK(known_backend_names().size() == known_backends().size());
}

TEST_CASE("registry: compiled-in backends are the known ones with a factory, in order") {
  std::vector<std::string> want, got;
  for (const BackendEntry& e : known_backends())
    if (e.create) want.push_back(e.name);
  for (const BackendEntry& e : compiled_backends()) got.push_back(e.name);
  CHECK(got == want);
  CHECK(fastest_usable_backend().size() > 0);
}

TEST_CASE("registry: a backend object agrees with its entry") {
  for (const BackendEntry& e : compiled_backends()) {
    INFO("backend " << e.name);
    BackendOptions opts;
    opts.threads = 2;
    if (!unusable_reason(e.name, opts).empty()) continue;  // no GPU here: nothing to ask
    auto be = make_backend(e.name, opts);
    CHECK(be->name() == e.name);
    CHECK(be->is_host_memory() == (e.kind == BackendKind::Cpu));
    std::vector<Backend*> replicas{be.get()};
    CHECK(make_collective(e.name, replicas)->name().rfind(e.collective, 0) == 0);  // "nccl 2.x"
    CHECK(make_collective(e.name, replicas, "host")->name() == "host");
  }
}

TEST_CASE("registry: unknown names, backends not compiled in, collectives a backend lacks") {
  CHECK(find_backend("tpu") == nullptr);
  CHECK_THROWS_AS(backend_entry("tpu"), Error);
  for (const BackendEntry& e : known_backends()) {
    if (e.create) continue;
    INFO("backend " << e.name);
    CHECK(unusable_reason(e.name).find("not compiled into this build") != std::string::npos);
    CHECK(unusable_reason(e.name).find(e.not_built_why) != std::string::npos);
  }
  auto be = make_backend(reference_backend().name);
  std::vector<Backend*> replicas{be.get()};
  CHECK_THROWS_AS(make_collective(be->name(), replicas, "mpi"), Error);
}

// The head-to-head pairs of the bench come from the entries: the ones people ask about stay (a
// new backend may add its own).
TEST_CASE("registry: the head-to-head pairs") {
  std::set<std::pair<std::string, std::string>> pairs;
  for (const BackendEntry& e : known_backends())
    for (const std::string& other : e.compared_with) pairs.insert({e.name, other});
  const std::set<std::pair<std::string, std::string>> want = {
      {"cuda", "cudnn"}, {"cuda", "kokkos"}, {"kokkos", "openmp"}, {"openmp", "serial"}};
  CHECK(std::includes(pairs.begin(), pairs.end(), want.begin(), want.end()));
  CHECK(reference_backend().name == "serial");
}

}  // TEST_SUITE

}  // namespace pcnn::test
