// The openmp backend's wait policy (backends/openmp/wait_policy.cpp): libgomp's threads sleep at
// barriers when other processes were busy as the program started, unless the user chose a
// policy. The answer libgomp read at start-up is the one getenv gives here.
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "backends/registry.hpp"
#include "tests/harness.hpp"

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

}  // TEST_SUITE

}  // namespace pcnn::test
