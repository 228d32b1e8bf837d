// One ONNX conformance case on one backend: its plan (tests/onnx/mapping.hpp) run, and the output
// compared with ONNX's reference element by element. Free of the test framework, like the op
// table, so a tool can list the verdicts too.
#pragma once

#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "tests/onnx/cases.hpp"

namespace pcnn::test::onnx {

// |got - ref| <= atol + rtol*|ref|, at issue 15's numbers. ONNX's own runner loads node tests with
// rtol 1e-3 and atol 1e-7 (onnx/backend/test/loader); every case that runs also passes at 1e-7 on
// the CPU backends (notes/testing.md), and 1e-5 leaves GPU summation orders room near zero.
inline constexpr double kRtol = 1e-3;
inline constexpr double kAtol = 1e-5;

enum class Verdict { Passed, Failed, Skipped };
const char* to_string(Verdict v);  // "passed", "FAILED", "skipped"

struct Outcome {
  std::string name;  // the case's folder
  std::string op;    // its operator ("" for an expanded graph)
  Verdict verdict = Verdict::Skipped;
  std::string detail;  // the skip reason, or what failed (first mismatching elements)
};

Outcome run_onnx_case(Backend& be, const Case& c);

// got (with the shape pcnn computed) against the reference: shape, then every element (NaN and
// Inf fail). "" when it matches.
std::string compare_to_reference(const std::vector<float>& got, const std::vector<int64_t>& dims,
                                 const Tensor& want);

}  // namespace pcnn::test::onnx
