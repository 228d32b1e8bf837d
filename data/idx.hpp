// Reader of the IDX format (MNIST, Fashion-MNIST), gzipped or raw, with every header field
// checked against the file's real size: a truncated or foreign file is an Error, never garbage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pcnn {

struct IdxArray {
  std::vector<int> dims;       // e.g. {60000, 28, 28} for images, {60000} for labels
  std::vector<uint8_t> data;   // row-major, product(dims) bytes
};

// Reads an unsigned-byte IDX file (magic 0x00000801 / 0x00000803 ...); ".gz" content is detected
// by its magic bytes, not by the name. Throws pcnn::Error naming the file and what is wrong.
IdxArray read_idx(const std::string& path);

// Reads a whole file, gunzipping it when it starts with the gzip magic.
std::vector<uint8_t> read_maybe_gzipped(const std::string& path);

}  // namespace pcnn
