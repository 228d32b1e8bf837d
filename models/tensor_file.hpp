// The container of ParallelCNN model files: the safetensors layout, so a file opens from Python
// (safetensors.safe_open, or numpy at the data offsets) as well as from pcnn:
//   u64 little-endian N | N bytes of JSON header, padded with spaces | raw tensors
// The header maps each tensor name to {"dtype": "F32", "shape": [...], "data_offsets": [b, e]}
// (offsets into the raw part, which the tensors cover without holes) and "__metadata__" to a
// string -> string map. The container owns four metadata keys: "format" (the kind of file: our
// magic), "format_version", "pcnn_version" (the writer) and "crc32": zlib's crc32 of every byte
// of the file, its own 8 hex digits read as zeros. Floats are written little-endian explicitly;
// nothing depends on the time, so equal contents give identical bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace pcnn {

// 1 was the "PCNNMODEL1" text header with raw floats and no checksum (pcnn 0.1). 3 added
// non-trained state tensors (batchnorm running statistics) to models and checkpoints; the
// container is unchanged, so version-2 files, which have no state, are read as they are.
constexpr int kTensorFileVersion = 3;
constexpr int kOldestTensorFileVersion = 2;  // the oldest version this pcnn reads

struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> data;  // product(shape) values, row-major
};

struct TensorFile {
  std::map<std::string, std::string> metadata;  // the caller's keys (and, read back, pcnn_version)
  std::vector<NamedTensor> tensors;             // in file order
};

// What a file is to the reader: the "format" value and how errors call it.
struct FileKind {
  std::string format;       // e.g. "pcnn-model"
  std::string description;  // e.g. "ParallelCNN model file"
};

std::string encode_tensor_file(const TensorFile& f, const FileKind& kind);

// Checks the whole layout, the format, the version and the checksum; throws Error
// "'<name>' <what is wrong>" (too short, truncated, not this kind, version, checksum, a tensor
// that is not F32, overlaps, lies outside the file or disagrees with its shape).
TensorFile decode_tensor_file(const std::string& bytes, const FileKind& kind,
                              const std::string& name);

const char* pcnn_version();

// A crc32 as the files store it: 8 lowercase hex digits.
std::string crc32_text(uint32_t crc);

// Numbers as metadata strings: the shortest text that reads back exactly (std::to_chars).
std::string metadata_number(int64_t v);
std::string metadata_number(double v);
std::string metadata_number(float v);
// meta[key] read back with std::from_chars (every byte consumed, non-finite refused);
// fallback when the key is absent. Throws Error naming the key. T: int, int64_t, float, double.
template <class T>
T metadata_value(const std::map<std::string, std::string>& meta, const std::string& key, T fallback);

}  // namespace pcnn
