// The ONNX conformance cases' own machinery, checked on bytes written by hand here: the protobuf
// wire reader (varints, packed and unpacked repeated fields, truncation), TensorProto and
// ModelProto parsing, the padding rule and the element-wise comparison at ONNX's tolerances.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/check.hpp"
#include "tests/onnx/attrs.hpp"
#include "tests/onnx/cases.hpp"
#include "tests/onnx/run.hpp"
#include "tests/onnx/wire.hpp"

namespace pcnn::test::onnx {

namespace {

// A tiny protobuf writer, the mirror of wire.cpp, for building messages in the tests.
std::string varint(uint64_t v) {
  std::string s;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    s.push_back(char(b | (v ? 0x80 : 0)));
  } while (v);
  return s;
}
std::string key(int field, int wire) { return varint(uint64_t(field) << 3 | wire); }
std::string int_field(int field, int64_t v) { return key(field, 0) + varint(uint64_t(v)); }
std::string bytes_field(int field, const std::string& b) {
  return key(field, 2) + varint(b.size()) + b;
}
std::string float_bytes(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  std::string s;
  for (int i = 0; i < 4; ++i) s.push_back(char((u >> (8 * i)) & 0xff));
  return s;
}
std::vector<uint8_t> to_bytes(const std::string& s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

}  // namespace

TEST_SUITE("core") {
TEST_CASE("onnx reader: varints of one to ten bytes, and truncated ones") {
  const std::string enc = varint(300) + varint(uint64_t(-1)) + varint(0);
  CHECK(varint(300) == std::string("\xac\x02"));
  const uint8_t* p = reinterpret_cast<const uint8_t*>(enc.data());
  const uint8_t* end = p + enc.size();
  CHECK(read_varint(p, end, "t") == 300);
  CHECK(int64_t(read_varint(p, end, "t")) == -1);  // negative int64: ten bytes
  CHECK(read_varint(p, end, "t") == 0);
  CHECK(p == end);
  const std::string cut = "\xac";
  const uint8_t* q = reinterpret_cast<const uint8_t*>(cut.data());
  CHECK_THROWS_WITH_AS(read_varint(q, q + 1, "x.pb"), "x.pb: truncated varint", Error);
}

TEST_CASE("onnx reader: a tensor from packed or unpacked fields, or raw little-endian bytes") {
  const std::string packed =
      bytes_field(1, varint(2) + varint(3)) + int_field(2, 1) +
      bytes_field(4, float_bytes(1.5f) + float_bytes(-2.f) + float_bytes(0.25f) +
                         float_bytes(3.f) + float_bytes(-0.5f) + float_bytes(7.f)) +
      bytes_field(8, "x");
  const Tensor a = parse_tensor(to_bytes(packed), "a");
  CHECK(a.name == "x");
  CHECK(a.dims == std::vector<int64_t>{2, 3});
  CHECK(a.type == DataType::Float);
  CHECK(a.floats == std::vector<float>{1.5f, -2.f, 0.25f, 3.f, -0.5f, 7.f});

  std::string raw;
  for (float f : {1.5f, -2.f, 0.25f, 3.f, -0.5f, 7.f}) raw += float_bytes(f);
  const Tensor b = parse_tensor(
      to_bytes(int_field(1, 2) + int_field(1, 3) + int_field(2, 1) + bytes_field(9, raw)), "b");
  CHECK(b.dims == a.dims);
  CHECK(b.floats == a.floats);

  // int64 labels: raw (8 bytes each, -1 as all ones) and int64_data give the same values.
  std::string raw64 = std::string("\x04\0\0\0\0\0\0\0", 8) + std::string(8, '\xff');
  const Tensor c =
      parse_tensor(to_bytes(int_field(1, 2) + int_field(2, 7) + bytes_field(9, raw64)), "c");
  CHECK(c.ints == std::vector<int64_t>{4, -1});
  const Tensor d = parse_tensor(to_bytes(int_field(1, 2) + int_field(2, 7) +
                                         bytes_field(7, varint(4) + varint(uint64_t(-1)))),
                                "d");
  CHECK(d.ints == c.ints);

  // A value count that disagrees with the dims, or a field running past the end, is an error.
  CHECK_THROWS_WITH_AS(
      parse_tensor(to_bytes(int_field(1, 4) + int_field(2, 1) + bytes_field(9, raw)), "e"),
      "e: raw_data has 24 bytes for 4 values of 4 bytes", Error);
  std::string cut = bytes_field(9, raw);
  cut.pop_back();
  CHECK_THROWS_WITH_AS(parse_tensor(to_bytes(cut), "f"), "f: field 9 claims 24 bytes, 23 left",
                       Error);
  // Dimensions whose product overflows are refused before anything is sized from them.
  CHECK_THROWS_WITH_AS(
      parse_tensor(to_bytes(int_field(1, int64_t(1) << 40) + int_field(1, int64_t(1) << 40)), "g"),
      "g: dimension 1099511627776", Error);
  CHECK_THROWS_WITH_AS(
      parse_tensor(to_bytes(int_field(1, int64_t(1) << 20) + int_field(1, int64_t(1) << 20)), "h"),
      "h: more than 2^31 elements", Error);
}

TEST_CASE("onnx reader: a model's node, attributes, graph inputs and opset") {
  const std::string ints_attr = bytes_field(1, "strides") +
                                bytes_field(8, varint(2) + varint(1)) +
                                int_field(20, Attribute::Ints);
  const std::string float_attr =
      bytes_field(1, "alpha") + key(2, 5) + float_bytes(0.25f) + int_field(20, Attribute::Float);
  const std::string str_attr = bytes_field(1, "auto_pad") + bytes_field(4, "SAME_UPPER") +
                               int_field(20, Attribute::String);
  const std::string node = bytes_field(1, "x") + bytes_field(1, "") + bytes_field(2, "y") +
                           bytes_field(4, "Conv") + bytes_field(5, ints_attr) +
                           bytes_field(5, float_attr) + bytes_field(5, str_attr);
  const std::string graph = bytes_field(1, node) + bytes_field(2, "g") +
                            bytes_field(11, bytes_field(1, "x")) +
                            bytes_field(12, bytes_field(1, "y"));
  const std::string opset = bytes_field(1, "") + int_field(2, 13);
  const std::string model = int_field(1, 8) + bytes_field(7, graph) + bytes_field(8, opset);
  const Model m = parse_model(to_bytes(model), "m");
  REQUIRE(m.nodes.size() == 1);
  const Node& n = m.nodes[0];
  CHECK(m.opset == 13);
  CHECK(n.op_type == "Conv");
  CHECK(n.inputs == std::vector<std::string>{"x", ""});
  CHECK(m.inputs == std::vector<std::string>{"x"});
  CHECK(m.outputs == std::vector<std::string>{"y"});
  REQUIRE(n.find("strides"));
  CHECK(n.find("strides")->value_text() == "2,1");
  CHECK(n.find("alpha")->f == 0.25f);
  CHECK(n.find("auto_pad")->s == "SAME_UPPER");

  // Every cut of the model is read or refused with pcnn::Error, never read past its end (the
  // reader's bounds; an ASan run over all of libonnx-testdata's files is in notes/testing.md).
  int refused = 0;
  for (size_t len = 0; len < model.size(); ++len) {
    try {
      parse_model(to_bytes(model.substr(0, len)), "cut");
    } catch (const Error&) {
      ++refused;
    }
  }
  CHECK(refused > int(model.size()) / 2);

  Attrs a(n);
  CHECK(a.ints("strides", {1, 1}) == std::vector<int64_t>{2, 1});
  CHECK(a.unread() == "attribute alpha = 0.25 (not mapped)");  // read by nobody yet
}

TEST_CASE("onnx mapping: auto_pad and pads reduced to one symmetric pad, or a reason") {
  Node n;
  Attribute same;
  same.name = "auto_pad";
  same.kind = Attribute::String;
  same.s = "SAME_UPPER";
  n.attributes = {same};
  const int64_t in5[2] = {5, 5}, in4[2] = {4, 4}, k3[2] = {3, 3}, k2[2] = {2, 2};
  int pad = -1;
  Attrs a(n);
  CHECK(symmetric_pad(a, in5, k3, 2, pad) == "");  // out 3: 2 padded, one each side
  CHECK(pad == 1);
  CHECK(symmetric_pad(a, in4, k2, 1, pad) ==
        "attribute auto_pad = SAME_UPPER (gives pads 0,0,1,1; pcnn pads every side the same)");
  Attribute pads;
  pads.name = "pads";
  pads.kind = Attribute::Ints;
  pads.ints = {1, 0, 1, 0};
  Node m;
  m.attributes = {pads};
  Attrs b(m);
  CHECK(symmetric_pad(b, in5, k3, 1, pad) ==
        "attribute pads = 1,0,1,0 (pcnn pads every side the same)");
}

TEST_CASE("onnx comparison: |got - ref| <= atol + rtol * |ref|, NaN fails, shapes must agree") {
  Tensor ref;
  ref.type = DataType::Float;
  ref.dims = {3};
  ref.floats = {1.f, -100.f, 0.f};
  const std::vector<int64_t> dims = {3};
  CHECK(compare_to_reference({1.001f, -100.1f, 9e-6f}, dims, ref) == "");
  CHECK(compare_to_reference({1.0012f, -100.f, 0.f}, dims, ref).rfind("1 of 3 elements", 0) == 0);
  CHECK(compare_to_reference({1.f, -100.f, 2e-5f}, dims, ref) != "");
  CHECK(compare_to_reference({std::nanf(""), -100.f, 0.f}, dims, ref) != "");
  CHECK(compare_to_reference({1.f, -100.f, 0.f}, {1, 3}, ref).rfind("shape (1,3)", 0) == 0);
}

TEST_CASE("onnx cases: a missing folder names the package and scripts/setup.sh") {
  CHECK_THROWS_WITH_AS(find_cases("/nonexistent/onnx"),
                       doctest::Contains("install Debian's libonnx-testdata (scripts/setup.sh"),
                       Error);
}

}  // TEST_SUITE

}  // namespace pcnn::test::onnx
