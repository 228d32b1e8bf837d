// A node's attributes as the mapping reads them: typed getters with ONNX's defaults, a record of
// which were read (an attribute no mapper reads makes the case skipped, never silently ignored),
// and ONNX's padding rules (pads, auto_pad) reduced to the one symmetric pad pcnn's ops take.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tests/onnx/proto.hpp"

namespace pcnn::test::onnx {

class Attrs {
 public:
  explicit Attrs(const Node& n) : node_(n) {}
  int64_t i(const std::string& name, int64_t dflt);
  float f(const std::string& name, float dflt);
  std::string s(const std::string& name, const std::string& dflt);
  std::vector<int64_t> ints(const std::string& name, std::vector<int64_t> dflt);
  bool has(const std::string& name) const { return node_.find(name) != nullptr; }
  // "attribute X = V is not mapped" for the first attribute nobody read; "" when all were read.
  std::string unread() const;

 private:
  const Attribute* get(const std::string& name, int kind);
  const Node& node_;
  std::set<std::string> read_;
};

// "attribute name = value (why)", the form every skip reason about an attribute takes.
std::string attribute_reason(const std::string& name, const std::string& value,
                             const std::string& why);

// The padding of a 2-D window op (conv, pooling) from auto_pad and pads, given the input's (H, W),
// the window (R, S) and the stride: sets pad and returns "" when every side gets the same pad,
// else the reason it cannot run.
std::string symmetric_pad(Attrs& a, const int64_t in[2], const int64_t window[2], int64_t stride,
                          int& pad);

}  // namespace pcnn::test::onnx
