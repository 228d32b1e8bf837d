// Test runner: `pcnn_tests --backend NAME [doctest options]` runs every case on NAME against the
// serial reference. A backend compiled in but not usable here (no GPU) exits with code 77, which
// CTest reports as skipped — never as passed. `pcnn_tests --mode test|grad|perf ...` runs the op
// table over every usable backend in one process instead (tests/op_modes.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "core/check.hpp"
#include "tests/harness.hpp"
#include "tests/op_modes.hpp"

namespace pcnn::test {
void set_backends(std::unique_ptr<Backend> under_test, std::unique_ptr<Backend> ref,
                  const std::string& name);
void drop_backends();
}  // namespace pcnn::test

int main(int argc, char** argv) {
  if (pcnn::test::wants_op_mode(argc, argv)) return pcnn::test::run_op_mode(argc, argv);
  std::string name = "serial";
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
      name = argv[++i];
    } else if (std::strncmp(argv[i], "--backend=", 10) == 0) {
      name = argv[i] + 10;
    } else {
      rest.push_back(argv[i]);
    }
  }
  try {
    pcnn::BackendOptions opts;
    opts.threads = 2;  // fixed, so CPU results are reproducible run to run
    pcnn::test::set_backends(pcnn::make_backend(name, opts), pcnn::make_backend("serial"), name);
  } catch (const pcnn::Unavailable& e) {
    std::printf("SKIPPED: backend %s is compiled in but cannot run here: %s\n", name.c_str(),
                e.what());
    return 77;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pcnn_tests: %s\n", e.what());
    return 2;
  }
  std::printf("pcnn_tests: backend under test: %s\n", name.c_str());
  doctest::Context ctx(int(rest.size()), rest.data());
  const int rc = ctx.run();
  pcnn::test::drop_backends();
  return rc;
}
