// The ONNX node conformance cases (Debian's libonnx-testdata) on the backend under test: inputs
// and reference outputs written by the ONNX project, run through pcnn's ops
// (tests/onnx/mapping.cpp) and compared at ONNX's tolerances. Cases pcnn cannot express are counted
// as skipped with their reason; PCNN_ONNX_VERBOSE=1 prints every case's verdict as a table row
// (notes/testing.md).
#include <cstdio>
#include <cstdlib>
#include <set>

#include "tests/harness.hpp"
#include "tests/onnx/run.hpp"

namespace pcnn::test::onnx {

namespace {

// Cases that must run (not be skipped) wherever the mapping is right: a mapper that wrongly skips
// everything would otherwise pass.
const std::set<std::string> kMustRun = {"test_basic_conv_with_padding",
                                        "test_conv_with_strides_padding",
                                        "test_maxpool_2d_default",
                                        "test_maxpool_2d_pads",
                                        "test_averagepool_2d_strides",
                                        "test_averagepool_2d_pads",
                                        "test_gemm_all_attributes",
                                        "test_gemm_transposeA",
                                        "test_relu",
                                        "test_tanh",
                                        "test_sigmoid",
                                        "test_softmax_example",
                                        "test_sce_mean",
                                        "test_sce_sum",
                                        "test_globalaveragepool",
                                        "test_batchnorm_epsilon"};

bool verbose() {
  const char* v = std::getenv("PCNN_ONNX_VERBOSE");
  return v && *v && std::string(v) != "0";
}

}  // namespace

TEST_SUITE("backend") {
TEST_CASE("onnx: libonnx-testdata's node cases at ONNX's tolerances") {
  std::vector<Case> cases;
  try {
    cases = find_cases(cases_folder());
  } catch (const std::exception& e) {
    FAIL(std::string(e.what()));
  }
  int run = 0, passed = 0, skipped = 0;
  std::set<std::string> ran;
  if (verbose())
    std::printf("| case | operator | on %s |\n|---|---|---|\n", backend_name().c_str());
  for (const Case& c : cases) {
    const Outcome o = run_onnx_case(backend(), c);
    if (o.verdict == Verdict::Skipped) {
      ++skipped;
    } else {
      ++run;
      ran.insert(o.name);
      passed += o.verdict == Verdict::Passed;
    }
    CHECK_MESSAGE(o.verdict != Verdict::Failed, "backend " << backend_name() << ", ONNX case "
                                                           << o.name << " (" << o.op
                                                           << "): " << o.detail);
    if (verbose())
      std::printf("| %s | %s | %s%s%s |\n", o.name.c_str(), o.op.empty() ? "-" : o.op.c_str(),
                  to_string(o.verdict), o.detail.empty() ? "" : ": ", o.detail.c_str());
  }
  for (const std::string& name : kMustRun)
    CHECK_MESSAGE(ran.count(name),
                  "ONNX case " << name << " was skipped or not found; it should run");
  std::printf(
      "onnx cases on backend %s: %d run, %d passed, %d skipped "
      "(PCNN_ONNX_VERBOSE=1 lists them with reasons)\n",
      backend_name().c_str(), run, passed, skipped);
}

}  // TEST_SUITE

}  // namespace pcnn::test::onnx
