// The parts of ONNX's TensorProto and ModelProto -> GraphProto -> NodeProto that the conformance
// cases need: a tensor's dims, type and values; the graph's one node (operator and attributes),
// its inputs and outputs; the opset. Fields not listed here are skipped unread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pcnn::test::onnx {

// TensorProto.DataType values the cases use.
enum class DataType : int {
  Undefined = 0, Float = 1, Uint8 = 2, Int8 = 3, Int32 = 6, Int64 = 7, Bool = 9, Float16 = 10,
  Double = 11
};
const char* to_string(DataType t);  // "float", "int64", ... ("type N" when unnamed)
std::string shape_text(const std::vector<int64_t>& dims);  // "(2,3,4)"

struct Tensor {
  std::string name;
  std::vector<int64_t> dims;  // empty: a scalar
  DataType type = DataType::Undefined;
  std::vector<float> floats;  // type Float (from raw_data or float_data)
  std::vector<int64_t> ints;  // type Int64 or Int32 (from raw_data, int64_data or int32_data)
  size_t count() const;       // product of dims (1 for a scalar)
};

// AttributeProto, the kinds pcnn's mapping reads; others keep only their name and type.
struct Attribute {
  enum Kind { Undefined = 0, Float, Int, String, Tensor, Graph, Floats, Ints, Strings };
  std::string name;
  int kind = Undefined;
  float f = 0.f;
  int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::string value_text() const;  // "2", "0.5", "1,1,2,2", "SAME_UPPER": for skip reasons
};

struct Node {
  std::string op_type, domain;
  std::vector<std::string> inputs, outputs;  // "" marks an optional input left out
  std::vector<Attribute> attributes;
  const Attribute* find(const std::string& name) const;  // nullptr when absent
};

struct Model {
  int64_t opset = 0;  // of the default domain ("" or "ai.onnx")
  std::vector<Node> nodes;
  std::vector<std::string> inputs, outputs;  // graph inputs and outputs, by name, in order
};

// Parse a serialised message; `what` names it in errors (a file name).
Tensor parse_tensor(const std::vector<uint8_t>& bytes, const std::string& what);
Model parse_model(const std::vector<uint8_t>& bytes, const std::string& what);

// A whole file; throws pcnn::Error naming it when it cannot be read.
std::vector<uint8_t> read_bytes(const std::string& path);

}  // namespace pcnn::test::onnx
