// Encoding and strict decoding of the safetensors layout. The decoder checks the structure
// first (so a cut file says "truncated", not "checksum"), then the checksum, then copies.
#include "models/tensor_file.hpp"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "core/checked_math.hpp"
#include "models/json_text.hpp"

#ifndef PCNN_VERSION
#define PCNN_VERSION "unknown"
#endif

namespace pcnn {

namespace {
using nlohmann::json;

const char* const kCrcKey = "\"crc32\":\"";
const char* const kCrcZeros = "00000000";
// safetensors refuses headers over 100 MB; so do we, before parsing one.
constexpr uint64_t kMaxHeader = 100u << 20;

uint32_t crc_of(uint32_t crc, const char* p, size_t n) {
  return uint32_t(crc32_z(crc, reinterpret_cast<const Bytef*>(p), n));
}

struct Extent {
  std::string name;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0, count = 0;
};

class Decoder {
 public:
  Decoder(const std::string& bytes, const FileKind& kind, const std::string& name)
      : bytes_(bytes), kind_(kind), name_(name) {}
  TensorFile run();

 private:
  [[noreturn]] void fail(const std::string& msg) const { throw Error("'" + name_ + "' " + msg); }
  void read_metadata(const json& meta, TensorFile& out);
  Extent read_extent(const std::string& name, const json& v) const;
  void check_crc(const std::string& stored) const;

  const std::string& bytes_;
  const FileKind& kind_;
  const std::string& name_;
  uint64_t header_size_ = 0;
};

TensorFile Decoder::run() {
  const std::string what = "a " + kind_.description;
  if (bytes_.size() < 10 || bytes_[8] != '{')
    fail("is not " + what + " (no safetensors header)");
  for (int i = 7; i >= 0; --i) header_size_ = header_size_ << 8 | uint8_t(bytes_[size_t(i)]);
  if (header_size_ > bytes_.size() - 8)
    fail("is truncated: its header claims " + std::to_string(header_size_) + " bytes, " +
         std::to_string(bytes_.size() - 8) + " follow");
  if (header_size_ > kMaxHeader) fail("has a header of more than 100 MB (corrupt file)");
  json h;
  try {
    h = json::parse(bytes_.begin() + 8, bytes_.begin() + 8 + std::ptrdiff_t(header_size_));
  } catch (const json::exception& e) {
    fail("has a corrupt header (" + std::string(e.what()).substr(0, 160) + ")");
  }
  if (!h.is_object()) fail("has a corrupt header (not a JSON object)");
  const auto meta = h.find("__metadata__");
  if (meta == h.end() || !meta->is_object())
    fail("is not " + what + " (a safetensors file without ParallelCNN metadata)");
  TensorFile out;
  read_metadata(*meta, out);

  std::vector<Extent> extents;
  for (const auto& [name, v] : h.items())
    if (name != "__metadata__") extents.push_back(read_extent(name, v));
  std::sort(extents.begin(), extents.end(),
            [](const Extent& a, const Extent& b) { return a.begin < b.begin; });
  const uint64_t data_size = bytes_.size() - 8 - header_size_;
  uint64_t next = 0;
  for (const Extent& e : extents) {
    if (e.begin != next) fail("has a hole or an overlap before tensor " + quoted(e.name));
    if (e.end > data_size)
      fail("is truncated: tensor " + quoted(e.name) + " ends at byte " + std::to_string(e.end) +
           " of the data, which has " + std::to_string(data_size));
    next = e.end;
  }
  if (next != data_size) fail("has " + std::to_string(data_size - next) + " bytes after its last tensor");
  check_crc(out.metadata.at("crc32"));
  out.metadata.erase("crc32");

  const char* data = bytes_.data() + 8 + header_size_;
  for (const Extent& e : extents) {
    NamedTensor t{e.name, e.shape, std::vector<float>(e.count)};
    for (uint64_t i = 0; i < e.count; ++i) {
      const unsigned char* p = reinterpret_cast<const unsigned char*>(data + e.begin + 4 * i);
      const uint32_t u = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
      std::memcpy(&t.data[i], &u, 4);
    }
    out.tensors.push_back(std::move(t));
  }
  return out;
}

void Decoder::read_metadata(const json& meta, TensorFile& out) {
  for (const auto& [key, v] : meta.items()) {
    if (!v.is_string()) fail("has a corrupt header (metadata " + quoted(key) + " is not a string)");
    out.metadata[key] = v.get<std::string>();
  }
  const auto get = [&](const char* key) {
    const auto it = out.metadata.find(key);
    return it == out.metadata.end() ? std::string() : it->second;
  };
  if (get("format") != kind_.format)
    fail("is not a " + kind_.description + " (its format is " + quoted(get("format")) + ")");
  bool known = false;
  for (int v = kOldestTensorFileVersion; v <= kTensorFileVersion; ++v)
    known = known || get("format_version") == std::to_string(v);
  if (!known)
    fail("has format version " + quoted(get("format_version")) + " (written by pcnn " +
         quoted(get("pcnn_version")) + "); this pcnn reads versions " +
         std::to_string(kOldestTensorFileVersion) + " to " + std::to_string(kTensorFileVersion));
  const std::string crc = get("crc32");
  if (crc.size() != 8 || crc.find_first_not_of("0123456789abcdef") != std::string::npos)
    fail("has a corrupt header (crc32 " + quoted(crc) + ")");
  out.metadata.erase("format");
  out.metadata.erase("format_version");
}

Extent Decoder::read_extent(const std::string& name, const json& v) const {
  const std::string t = "tensor " + quoted(name);
  if (!v.is_object() || v.size() != 3 || !v.contains("dtype") || !v.contains("shape") ||
      !v.contains("data_offsets"))
    fail("has a corrupt header (" + t + " needs dtype, shape and data_offsets, nothing else)");
  if (v["dtype"] != "F32") fail("has " + t + " of dtype " + brief(v["dtype"]) + " (only F32 is read)");
  const json& shape = v["shape"];
  const json& off = v["data_offsets"];
  Extent e;
  e.name = name;
  if (!shape.is_array() || shape.size() > 8) fail("has a corrupt header (" + t + " shape)");
  for (const json& d : shape) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > kMaxElements)
      fail("has a corrupt header (" + t + " shape: " + brief(d) + ")");
    e.shape.push_back(d.get<int64_t>());
  }
  const auto count = checked_product(e.shape);
  if (!count || *count > kMaxElements) fail("has " + t + " of more than " + std::to_string(kMaxElements) + " values");
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
    fail("has a corrupt header (" + t + " data_offsets)");
  e.begin = off[0].get<uint64_t>();
  e.end = off[1].get<uint64_t>();
  e.count = *count;
  if (e.end < e.begin || e.end - e.begin != 4 * e.count)
    fail("has " + t + " of " + std::to_string(e.end - e.begin) + " bytes, its shape " +
         shape.dump() + " needs " + std::to_string(4 * e.count));
  return e;
}

// The checksum covers every byte but its own digits, which count as "00000000".
void Decoder::check_crc(const std::string& stored) const {
  const std::string header(bytes_, 8, header_size_);
  const size_t at = header.find(kCrcKey + stored + "\"");
  if (at == std::string::npos) fail("has a corrupt header (crc32 not as pcnn writes it)");
  const size_t digits = 8 + at + std::strlen(kCrcKey);
  uint32_t crc = crc_of(crc_of(0, nullptr, 0), bytes_.data(), digits);
  crc = crc_of(crc, kCrcZeros, 8);
  crc = crc_of(crc, bytes_.data() + digits + 8, bytes_.size() - digits - 8);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION  // fuzzers cannot forge checksums: look past them
  if (crc32_text(crc) != stored)
    fail("is corrupt: checksum mismatch (crc32 " + crc32_text(crc) + ", the file says " + stored + ")");
#endif
}
}  // namespace

const char* pcnn_version() { return PCNN_VERSION; }

std::string crc32_text(uint32_t crc) {
  char s[9];
  std::snprintf(s, sizeof s, "%08x", crc);
  return s;
}

namespace {
using nlohmann::json;

template <class T>
std::string to_text(T v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}
}  // namespace

std::string metadata_number(int64_t v) { return to_text(v); }
std::string metadata_number(double v) { return to_text(v); }
std::string metadata_number(float v) { return to_text(v); }

template <class T>
T metadata_value(const std::map<std::string, std::string>& meta, const std::string& key, T fallback) {
  const auto it = meta.find(key);
  if (it == meta.end()) return fallback;
  const std::string& s = it->second;
  T v{};
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  bool ok = r.ec == std::errc() && r.ptr == s.data() + s.size();
  if constexpr (std::is_floating_point_v<T>) ok = ok && std::isfinite(v);
  PCNN_CHECK(ok, "metadata '" << key << "' is not a finite number: " << quoted(s));
  return v;
}
template int metadata_value(const std::map<std::string, std::string>&, const std::string&, int);
template int64_t metadata_value(const std::map<std::string, std::string>&, const std::string&, int64_t);
template float metadata_value(const std::map<std::string, std::string>&, const std::string&, float);
template double metadata_value(const std::map<std::string, std::string>&, const std::string&, double);

std::string encode_tensor_file(const TensorFile& f, const FileKind& kind) {
  json header = json::object();
  uint64_t offset = 0;
  for (const NamedTensor& t : f.tensors) {
    PCNN_CHECK(checked_product(t.shape) == t.data.size(), "tensor '" << t.name << "': shape and size disagree");
    PCNN_CHECK(t.name != "__metadata__" && !header.contains(t.name), "tensor name '" << t.name << "' used twice");
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + 4 * t.data.size()}}};
    offset += 4 * t.data.size();
  }
  json meta(f.metadata);
  for (const char* own : {"format", "format_version", "pcnn_version", "crc32"})
    PCNN_CHECK(!meta.contains(own), "metadata key '" << own << "' belongs to the file format");
  meta["format"] = kind.format;
  meta["format_version"] = std::to_string(kTensorFileVersion);
  meta["pcnn_version"] = pcnn_version();
  meta["crc32"] = kCrcZeros;
  header["__metadata__"] = meta;
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');  // tensors start 8-byte aligned, as safetensors writes
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char(uint64_t(h.size()) >> (8 * i));
  out += h;
  out.reserve(out.size() + offset);
  for (const NamedTensor& t : f.tensors)
    for (float v : t.data) {
      uint32_t u;
      std::memcpy(&u, &v, 4);
      for (int i = 0; i < 4; ++i) out.push_back(char(u >> (8 * i)));
    }
  const size_t digits = 8 + h.find(kCrcKey) + std::strlen(kCrcKey);
  out.replace(digits, 8, crc32_text(crc_of(crc_of(0, nullptr, 0), out.data(), out.size())));
  return out;
}

TensorFile decode_tensor_file(const std::string& bytes, const FileKind& kind,
                              const std::string& name) {
  return Decoder(bytes, kind, name).run();
}

}  // namespace pcnn
