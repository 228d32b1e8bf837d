// Attribute getters and the padding rule (see attrs.hpp).
#include "tests/onnx/attrs.hpp"

#include <algorithm>
#include <sstream>

#include "core/check.hpp"

namespace pcnn::test::onnx {

namespace {

std::string join(const std::vector<int64_t>& v) {
  std::ostringstream os;
  for (size_t k = 0; k < v.size(); ++k) os << (k ? "," : "") << v[k];
  return os.str();
}

}  // namespace

const Attribute* Attrs::get(const std::string& name, int kind) {
  read_.insert(name);
  const Attribute* a = node_.find(name);
  PCNN_CHECK(!a || a->kind == kind, "attribute " << name << " of " << node_.op_type << " has type "
                                                 << a->kind << ", not " << kind);
  return a;
}

int64_t Attrs::i(const std::string& name, int64_t dflt) {
  const Attribute* a = get(name, Attribute::Int);
  return a ? a->i : dflt;
}

float Attrs::f(const std::string& name, float dflt) {
  const Attribute* a = get(name, Attribute::Float);
  return a ? a->f : dflt;
}

std::string Attrs::s(const std::string& name, const std::string& dflt) {
  const Attribute* a = get(name, Attribute::String);
  return a ? a->s : dflt;
}

std::vector<int64_t> Attrs::ints(const std::string& name, std::vector<int64_t> dflt) {
  const Attribute* a = get(name, Attribute::Ints);
  return a ? a->ints : dflt;
}

std::string Attrs::unread() const {
  for (const Attribute& a : node_.attributes)
    if (!read_.count(a.name)) return attribute_reason(a.name, a.value_text(), "not mapped");
  return "";
}

std::string attribute_reason(const std::string& name, const std::string& value,
                             const std::string& why) {
  return "attribute " + name + " = " + value + " (" + why + ")";
}

std::string symmetric_pad(Attrs& a, const int64_t in[2], const int64_t window[2], int64_t stride,
                          int& pad) {
  const std::string auto_pad = a.s("auto_pad", "NOTSET");
  std::vector<int64_t> pads = a.ints("pads", {0, 0, 0, 0});
  if (auto_pad == "VALID") {
    pads = {0, 0, 0, 0};
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // Output ceil(in / stride); the padding it takes is split, the odd one at the end (UPPER)
    // or at the beginning (LOWER).
    for (int d = 0; d < 2; ++d) {
      const int64_t out = (in[d] + stride - 1) / stride;
      const int64_t total = std::max<int64_t>(0, (out - 1) * stride + window[d] - in[d]);
      const int64_t small = total / 2, large = total - small;
      pads[d] = auto_pad == "SAME_UPPER" ? small : large;
      pads[d + 2] = auto_pad == "SAME_UPPER" ? large : small;
    }
    if (std::count(pads.begin(), pads.end(), pads[0]) != 4)
      return attribute_reason("auto_pad", auto_pad,
                              "gives pads " + join(pads) + "; pcnn pads every side the same");
  } else if (auto_pad != "NOTSET") {
    return attribute_reason("auto_pad", auto_pad, "unknown value");
  }
  if (pads.size() != 4 || std::count(pads.begin(), pads.end(), pads[0]) != 4)
    return attribute_reason("pads", join(pads), "pcnn pads every side the same");
  pad = int(pads[0]);
  return "";
}

}  // namespace pcnn::test::onnx
