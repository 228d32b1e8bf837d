// The openmp backend's wait policy (backends/openmp/wait_policy.cpp): libgomp's threads sleep at
// barriers when other processes were busy as the program started, unless the user chose a
// policy. The answer libgomp read at start-up is the one getenv gives here.
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "backends/registry.hpp"
#include "tests/harness.hpp"
#ifdef PCNN_TEST_OPENMP_INTERNALS
#include "backends/openmp/free_cpus.hpp"
#endif

namespace pcnn::test {

TEST_SUITE("core") {

TEST_CASE("openmp: wait policy from the load at start, unless OMP_WAIT_POLICY/GOMP_SPINCOUNT") {
  bool built = false;
  for (const BackendEntry& e : compiled_backends()) built = built || e.name == "openmp";
  if (!built) return;  // nothing to check in a build without it
  const std::string device = make_backend("openmp", {})->device_name();
  bool user_chose = false;
  for (char** e = environ; *e; ++e)
    user_chose = user_chose || std::strncmp(*e, "OMP_WAIT_POLICY=", 16) == 0 ||
                 std::strncmp(*e, "GOMP_SPINCOUNT=", 15) == 0;
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  if (user_chose) {
    CHECK(device.find(" says") != std::string::npos);
  } else if (device.find("passive wait") != std::string::npos) {
    REQUIRE(policy);
    CHECK(std::strcmp(policy, "passive") == 0);
  } else {
    CHECK(device.find("spinning wait") != std::string::npos);
    CHECK(policy == nullptr);
  }
  // Other variables read as the C library reads them.
  CHECK(std::getenv("PCNN_SURELY_NOT_SET_ANYWHERE") == nullptr);
  REQUIRE(setenv("PCNN_WAIT_TEST", "x=1", 1) == 0);
  REQUIRE(std::getenv("PCNN_WAIT_TEST"));
  CHECK(std::strcmp(std::getenv("PCNN_WAIT_TEST"), "x=1") == 0);
  CHECK(std::getenv("PCNN_WAIT") == nullptr);  // a prefix of a set name is not that name
  unsetenv("PCNN_WAIT_TEST");
  CHECK(std::getenv("PCNN_WAIT_TEST") == nullptr);
}

#ifdef PCNN_TEST_OPENMP_INTERNALS
TEST_CASE("openmp: the free-CPU count stays within the allowed CPUs and the asked maximum") {
  const int allowed = omp::allowed_cpus();
  CHECK(allowed >= 1);
  CHECK(omp::busy_elsewhere() >= 0);
  const int free_now = omp::free_cpus_now();
  CHECK(free_now >= 1);
  CHECK(free_now <= allowed);
  omp::FreeCpuTracker one(1), many(allowed + 3, 0.0);  // 0 s: a reading every call
  for (int i = 0; i < 7; ++i) {
    CHECK(one.team() == 1);
    const int t = many.team();
    CHECK(t >= 1);
    CHECK(t <= allowed);
  }
  omp::FreeCpuTracker slow(allowed, 1e9);  // one reading, then the same answer
  const int first = slow.team();
  for (int i = 0; i < 3; ++i) CHECK(slow.team() == first);
}
#endif

}  // TEST_SUITE

}  // namespace pcnn::test
