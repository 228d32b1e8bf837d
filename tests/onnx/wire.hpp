// A reader of the protobuf wire format (varints, fixed 32/64-bit and length-delimited fields),
// just enough for the two ONNX messages the conformance cases hold (tests/onnx/proto.hpp).
// Written by hand on purpose: a test reader of two small messages does not justify a protobuf
// dependency (library, protoc, generated code) in every build that runs the tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pcnn::test::onnx {

enum class WireType { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

// One field as read: its number, wire type, and the payload (varint or fixed value, or the bytes).
struct Field {
  uint32_t number = 0;
  WireType type = WireType::Varint;
  uint64_t value = 0;             // Varint, Fixed64, Fixed32
  const uint8_t* data = nullptr;  // Bytes
  size_t size = 0;                // Bytes
  std::string bytes() const {
    return data ? std::string(reinterpret_cast<const char*>(data), size) : std::string();
  }
  float as_float() const;                              // Fixed32 read as an IEEE float
  int64_t as_int64() const { return int64_t(value); }  // int32/int64 fields (two's complement)
};

// Walks the fields of one message, in order. Throws pcnn::Error (naming `what`, the message being
// read) on a truncated varint or field, an unknown wire type (groups are not used by ONNX).
class WireReader {
 public:
  WireReader(const uint8_t* data, size_t size, std::string what)
      : p_(data), end_(data + size), what_(std::move(what)) {}
  bool next(Field& f);  // false at the end of the message

  // Repeated scalars come packed (one Bytes field) or one field per value: both are accepted.
  static void append_varints(const Field& f, std::vector<int64_t>& out, const std::string& what);
  static void append_floats(const Field& f, std::vector<float>& out, const std::string& what);

 private:
  uint64_t varint();
  const uint8_t* p_;
  const uint8_t* end_;
  std::string what_;
};

// Hands each field of the message that the Bytes field `msg` holds to on_field, in order.
template <class F>
void for_each_field(const Field& msg, const std::string& what, F&& on_field) {
  WireReader r(msg.data, msg.size, what);
  for (Field f; r.next(f);) on_field(f);
}

// Decodes one varint at p (advancing it); throws when it runs past end or past 10 bytes.
uint64_t read_varint(const uint8_t*& p, const uint8_t* end, const std::string& what);

}  // namespace pcnn::test::onnx
