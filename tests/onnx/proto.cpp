// TensorProto and ModelProto -> GraphProto -> NodeProto, read with the wire reader. Field numbers
// are those of onnx/onnx.proto (ONNX 1.12); each is named where it is read.
#include "tests/onnx/proto.hpp"

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/check.hpp"
#include "tests/onnx/wire.hpp"

namespace pcnn::test::onnx {

namespace {

// raw_data holds the values little-endian, `width` bytes each.
uint64_t raw_word(const std::string& raw, size_t i, int width) {
  uint64_t v = 0;
  for (int b = width - 1; b >= 0; --b) v = (v << 8) | uint8_t(raw[i * width + b]);
  return v;
}

void decode_raw(Tensor& t, const std::string& raw, const std::string& what) {
  const size_t n = t.count();
  auto expect = [&](int width) {
    PCNN_CHECK(raw.size() == n * width, what << ": raw_data has " << raw.size() << " bytes for "
                                             << n << " values of " << width << " bytes");
  };
  switch (t.type) {
    case DataType::Float:
      expect(4);
      t.floats.resize(n);
      for (size_t i = 0; i < n; ++i) {
        const uint32_t bits = uint32_t(raw_word(raw, i, 4));
        std::memcpy(&t.floats[i], &bits, 4);
      }
      break;
    case DataType::Int64:
      expect(8);
      for (size_t i = 0; i < n; ++i) t.ints.push_back(int64_t(raw_word(raw, i, 8)));
      break;
    case DataType::Int32:
      expect(4);
      for (size_t i = 0; i < n; ++i) t.ints.push_back(int32_t(uint32_t(raw_word(raw, i, 4))));
      break;
    default: break;  // kept undecoded: the mapping skips cases whose tensors are of other types
  }
}

Tensor read_tensor(const uint8_t* data, size_t size, const std::string& what) {
  Tensor t;
  std::string raw;
  bool has_raw = false;
  WireReader r(data, size, what);
  for (Field f; r.next(f);) {
    switch (f.number) {
      case 1: WireReader::append_varints(f, t.dims, what); break;   // dims
      case 2: t.type = DataType(int(f.value)); break;               // data_type
      case 4: WireReader::append_floats(f, t.floats, what); break;  // float_data
      case 5: WireReader::append_varints(f, t.ints, what); break;   // int32_data
      case 7: WireReader::append_varints(f, t.ints, what); break;   // int64_data
      case 8: t.name = f.bytes(); break;                            // name
      case 9:  // raw_data
        raw = f.bytes();
        has_raw = true;
        break;
      case 14: PCNN_CHECK(false, what << ": external data is not supported"); break;
      default: break;
    }
  }
  // A test tensor is small: bounding the element count keeps count() and the byte counts below
  // from overflowing on a damaged file.
  constexpr int64_t kMaxElements = int64_t(1) << 31;
  int64_t elements = 1;
  for (int64_t d : t.dims) {
    PCNN_CHECK(d >= 0 && d <= kMaxElements, what << ": dimension " << d);
    elements *= d;
    PCNN_CHECK(elements <= kMaxElements, what << ": more than 2^31 elements");
  }
  if (has_raw) decode_raw(t, raw, what);
  const size_t n = t.count();
  if (t.type == DataType::Float)
    PCNN_CHECK(t.floats.size() == n,
               what << ": " << t.floats.size() << " floats for " << n << " elements");
  if (t.type == DataType::Int64 || t.type == DataType::Int32)
    PCNN_CHECK(t.ints.size() == n,
               what << ": " << t.ints.size() << " integers for " << n << " elements");
  return t;
}

Attribute read_attribute(const Field& msg, const std::string& what) {
  Attribute a;
  for_each_field(msg, what, [&](const Field& f) {
    switch (f.number) {
      case 1: a.name = f.bytes(); break;                            // name
      case 2: a.f = f.as_float(); break;                            // f
      case 3: a.i = f.as_int64(); break;                            // i
      case 4: a.s = f.bytes(); break;                               // s
      case 7: WireReader::append_floats(f, a.floats, what); break;  // floats
      case 8: WireReader::append_varints(f, a.ints, what); break;   // ints
      case 20: a.kind = int(f.value); break;                        // type
      default: break;  // t, g, strings, tensors, graphs: no mapped operator reads them
    }
  });
  return a;
}

Node read_node(const Field& msg, const std::string& what) {
  Node n;
  for_each_field(msg, what, [&](const Field& f) {
    switch (f.number) {
      case 1: n.inputs.push_back(f.bytes()); break;   // input
      case 2: n.outputs.push_back(f.bytes()); break;  // output
      case 4: n.op_type = f.bytes(); break;           // op_type
      case 5: n.attributes.push_back(read_attribute(f, what + " (attribute)")); break;
      case 7: n.domain = f.bytes(); break;  // domain
      default: break;
    }
  });
  return n;
}

// ValueInfoProto: only its name (field 1).
std::string value_info_name(const Field& msg, const std::string& what) {
  WireReader r(msg.data, msg.size, what);
  for (Field f; r.next(f);)
    if (f.number == 1) return f.bytes();
  return "";
}

void read_graph(const Field& msg, Model& m, const std::string& what) {
  for_each_field(msg, what, [&](const Field& f) {
    switch (f.number) {
      case 1: m.nodes.push_back(read_node(f, what + " (node)")); break;  // node
      case 11: m.inputs.push_back(value_info_name(f, what)); break;      // input
      case 12: m.outputs.push_back(value_info_name(f, what)); break;     // output
      default: break;
    }
  });
}

// OperatorSetIdProto: domain (1), version (2).
void read_opset(const Field& msg, Model& m, const std::string& what) {
  std::string domain;
  int64_t version = 0;
  for_each_field(msg, what, [&](const Field& f) {
    if (f.number == 1) domain = f.bytes();
    if (f.number == 2) version = f.as_int64();
  });
  if (domain.empty() || domain == "ai.onnx") m.opset = version;
}

}  // namespace

std::string shape_text(const std::vector<int64_t>& dims) {
  std::ostringstream os;
  os << "(";
  for (size_t k = 0; k < dims.size(); ++k) os << (k ? "," : "") << dims[k];
  os << ")";
  return os.str();
}

const char* to_string(DataType t) {
  switch (t) {
    case DataType::Float: return "float";
    case DataType::Uint8: return "uint8";
    case DataType::Int8: return "int8";
    case DataType::Int32: return "int32";
    case DataType::Int64: return "int64";
    case DataType::Bool: return "bool";
    case DataType::Float16: return "float16";
    case DataType::Double: return "double";
    default: return "another type";
  }
}

size_t Tensor::count() const {
  size_t n = 1;
  for (int64_t d : dims) n *= size_t(d);
  return n;
}

std::string Attribute::value_text() const {
  std::ostringstream os;
  switch (kind) {
    case Float: os << f; break;
    case Int: os << i; break;
    case String: os << s; break;
    case Floats:
      for (size_t k = 0; k < floats.size(); ++k) os << (k ? "," : "") << floats[k];
      break;
    case Ints:
      for (size_t k = 0; k < ints.size(); ++k) os << (k ? "," : "") << ints[k];
      break;
    default: os << "(attribute type " << kind << ")";
  }
  return os.str();
}

const Attribute* Node::find(const std::string& name) const {
  for (const Attribute& a : attributes)
    if (a.name == name) return &a;
  return nullptr;
}

Tensor parse_tensor(const std::vector<uint8_t>& bytes, const std::string& what) {
  return read_tensor(bytes.data(), bytes.size(), what);
}

Model parse_model(const std::vector<uint8_t>& bytes, const std::string& what) {
  Model m;
  WireReader r(bytes.data(), bytes.size(), what);
  for (Field f; r.next(f);) {
    if (f.number == 7) {  // graph
      PCNN_CHECK(f.type == WireType::Bytes, what << ": graph is not a message");
      read_graph(f, m, what);
    } else if (f.number == 8) {  // opset_import
      read_opset(f, m, what);
    }
  }
  PCNN_CHECK(!m.nodes.empty(), what << ": the graph has no node");
  return m;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  PCNN_CHECK(in, "cannot open " << path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace pcnn::test::onnx
