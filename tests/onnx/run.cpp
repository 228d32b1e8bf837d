// Running and judging one conformance case (see run.hpp).
#include "tests/onnx/run.hpp"

#include <cmath>
#include <sstream>

#include "tests/onnx/mapping.hpp"

namespace pcnn::test::onnx {

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::Passed: return "passed";
    case Verdict::Failed: return "FAILED";
    default: return "skipped";
  }
}

std::string compare_to_reference(const std::vector<float>& got, const std::vector<int64_t>& dims,
                                 const Tensor& want) {
  std::ostringstream os;
  if (want.type != DataType::Float) {
    os << "reference output of type " << to_string(want.type);
    return os.str();
  }
  if (dims != want.dims || got.size() != want.floats.size()) {
    os << "shape " << shape_text(dims) << " (" << got.size() << " values), ONNX's "
       << shape_text(want.dims);
    return os.str();
  }
  int bad = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double ref = want.floats[i], diff = std::fabs(double(got[i]) - ref);
    // Written so that a NaN or Inf in got fails.
    if (diff <= kAtol + kRtol * std::fabs(ref)) continue;
    if (bad < 3) os << (bad ? "; " : "") << "[" << i << "] " << got[i] << " vs " << ref;
    if (!(diff <= worst)) worst = diff;
    ++bad;
  }
  if (bad == 0) return "";
  std::ostringstream msg;
  msg << bad << " of " << got.size() << " elements off by more than atol " << kAtol << " + rtol "
      << kRtol << " * |ref| (largest " << worst << "): " << os.str();
  return msg.str();
}

Outcome run_onnx_case(Backend& be, const Case& c) {
  Outcome o;
  o.name = c.name;
  if (!c.expands.empty()) {
    o.detail = "the function-expanded form (" + std::to_string(c.model.nodes.size()) +
               " nodes) of " + c.expands + ", which runs as one node";
    return o;
  }
  o.op = c.model.nodes[0].op_type;
  try {
    const CaseData data = load_case_data(c);
    std::vector<const Tensor*> inputs;
    for (size_t k = 0; k < data.inputs.size(); ++k)
      inputs.push_back(data.present[k] ? &data.inputs[k] : nullptr);
    const Plan plan = plan_case(c.model, inputs);
    if (!plan.skip.empty()) {
      o.detail = plan.skip;
      return o;
    }
    const std::vector<float> got = plan.run(be);
    o.detail = compare_to_reference(got, plan.dims, data.outputs.at(0));
  } catch (const std::exception& e) {
    o.detail = std::string("error: ") + e.what();
  }
  o.verdict = o.detail.empty() ? Verdict::Passed : Verdict::Failed;
  return o;
}

}  // namespace pcnn::test::onnx
