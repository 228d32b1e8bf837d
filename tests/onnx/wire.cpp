// The protobuf wire format, read by hand (see wire.hpp for why).
#include "tests/onnx/wire.hpp"

#include <cstring>

#include "core/check.hpp"

namespace pcnn::test::onnx {

namespace {

// Little-endian bytes to an integer, whatever the host's byte order.
uint64_t little_endian(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

float bits_to_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

uint64_t read_varint(const uint8_t*& p, const uint8_t* end, const std::string& what) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    PCNN_CHECK(p < end, what << ": truncated varint");
    const uint8_t b = *p++;
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  PCNN_CHECK(false, what << ": varint longer than 10 bytes");
  return 0;
}

float Field::as_float() const { return bits_to_float(uint32_t(value)); }

uint64_t WireReader::varint() { return read_varint(p_, end_, what_); }

bool WireReader::next(Field& f) {
  if (p_ == end_) return false;
  const uint64_t key = varint();
  f = Field{};
  f.number = uint32_t(key >> 3);
  PCNN_CHECK(f.number != 0, what_ << ": field number 0");
  switch (key & 7) {
    case 0:
      f.type = WireType::Varint;
      f.value = varint();
      break;
    case 1:
    case 5: {  // fixed 64 or 32 bits, little-endian
      const int bytes = (key & 7) == 1 ? 8 : 4;
      f.type = bytes == 8 ? WireType::Fixed64 : WireType::Fixed32;
      PCNN_CHECK(end_ - p_ >= bytes, what_ << ": truncated " << 8 * bytes << "-bit field "
                                           << f.number);
      f.value = little_endian(p_, bytes);
      p_ += bytes;
      break;
    }
    case 2: {
      f.type = WireType::Bytes;
      const uint64_t n = varint();
      PCNN_CHECK(n <= uint64_t(end_ - p_), what_ << ": field " << f.number << " claims " << n
                                                 << " bytes, " << (end_ - p_) << " left");
      f.data = p_;
      f.size = size_t(n);
      p_ += n;
      break;
    }
    default:
      PCNN_CHECK(false, what_ << ": field " << f.number << " has wire type " << (key & 7)
                              << " (groups are not supported)");
  }
  return true;
}

void WireReader::append_varints(const Field& f, std::vector<int64_t>& out,
                                const std::string& what) {
  if (f.type == WireType::Varint) {
    out.push_back(f.as_int64());
    return;
  }
  PCNN_CHECK(f.type == WireType::Bytes, what << ": field " << f.number << " is not a varint");
  const uint8_t* p = f.data;
  const uint8_t* end = f.data + f.size;
  while (p < end) out.push_back(int64_t(read_varint(p, end, what)));
}

void WireReader::append_floats(const Field& f, std::vector<float>& out, const std::string& what) {
  if (f.type == WireType::Fixed32) {
    out.push_back(f.as_float());
    return;
  }
  PCNN_CHECK(f.type == WireType::Bytes && f.size % 4 == 0,
             what << ": field " << f.number << " is not a float or a packed list of floats");
  for (size_t i = 0; i < f.size; i += 4)
    out.push_back(bits_to_float(uint32_t(little_endian(f.data + i, 4))));
}

}  // namespace pcnn::test::onnx
