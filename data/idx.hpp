// Reader of the IDX format (MNIST, Fashion-MNIST), gzipped or raw, with every header field
// checked before anything is allocated: a truncated, foreign or hostile file is an Error, never
// garbage, a wrapped size or a runaway inflate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pcnn {

struct IdxArray {
  std::vector<int> dims;       // e.g. {60000, 28, 28} for images, {60000} for labels
  std::vector<uint8_t> data;   // row-major, product(dims) bytes
};

// The largest payload read_idx accepts: twice the largest MNIST-format set published (EMNIST
// ByClass, 547 MB). A larger claim is a corrupt header or a decompression bomb.
constexpr uint64_t kMaxIdxBytes = uint64_t(1) << 30;

// Reads an unsigned-byte IDX file (magic 0x00000801 / 0x00000803 ...). Gzip is detected by its
// magic bytes, not by the name, and inflated as a stream: the header first, then at most the
// size it announces. Bytes past that size are an error, in a raw file or inside the gzip
// stream; bytes after the end of the gzip stream are ignored (as gzip -d does). Throws
// pcnn::Error naming the file and what is wrong.
IdxArray read_idx(const std::string& path);

}  // namespace pcnn
