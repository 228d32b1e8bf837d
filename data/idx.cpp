// IDX reading: gunzip (zlib) when needed, then check magic, rank, dimensions and size.
#include "data/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "core/check.hpp"

namespace pcnn {

std::vector<uint8_t> read_maybe_gzipped(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  PCNN_CHECK(in, "cannot open '" << path << "'");
  in.seekg(0, std::ios::end);
  const std::streamoff file_size = in.tellg();
  PCNN_CHECK(file_size >= 0, "cannot read '" << path << "'");
  in.seekg(0, std::ios::beg);
  std::vector<uint8_t> raw(static_cast<size_t>(file_size));
  in.read(reinterpret_cast<char*>(raw.data()), file_size);
  PCNN_CHECK(in || raw.empty(), "cannot read '" << path << "'");
  if (raw.size() < 2 || raw[0] != 0x1f || raw[1] != 0x8b) return raw;

  z_stream zs{};
  PCNN_CHECK(inflateInit2(&zs, 15 + 32) == Z_OK, "zlib could not start on '" << path << "'");
  // The gzip trailer holds the uncompressed size (mod 2^32): allocate once, exactly, so that
  // loading 47 MB of pixels does not pass through a much larger buffer.
  const size_t n = raw.size();
  const size_t isize = n >= 18 ? (size_t(raw[n - 4]) | size_t(raw[n - 3]) << 8 |
                                  size_t(raw[n - 2]) << 16 | size_t(raw[n - 1]) << 24)
                               : 0;
  // Deflate expands at most ~1032:1, so a larger claim is a corrupt trailer: don't believe it.
  const size_t guess = isize <= n * 1032 ? isize : n * 4;
  std::vector<uint8_t> out(std::max<size_t>(guess, 1024));
  zs.next_in = raw.data();
  zs.avail_in = static_cast<uInt>(raw.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (zs.total_out == out.size()) out.resize(out.size() * 2);  // trailer lied: grow
    zs.next_out = out.data() + zs.total_out;
    zs.avail_out = static_cast<uInt>(out.size() - zs.total_out);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) break;  // input ended before the stream did
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) break;
  }
  const size_t produced = zs.total_out;
  inflateEnd(&zs);
  PCNN_CHECK(rc == Z_STREAM_END, "'" << path << "' is a corrupt or truncated gzip file");
  out.resize(produced);
  out.shrink_to_fit();
  return out;
}

IdxArray read_idx(const std::string& path) {
  std::vector<uint8_t> bytes = read_maybe_gzipped(path);
  PCNN_CHECK(bytes.size() >= 4, "'" << path << "' is too short to be an IDX file");
  // Magic: two zero bytes, a type code (0x08 = unsigned byte), the number of dimensions.
  PCNN_CHECK(bytes[0] == 0 && bytes[1] == 0,
             "'" << path << "' is not an IDX file (wrong magic number)");
  PCNN_CHECK(bytes[2] == 0x08, "'" << path << "' holds IDX type 0x" << std::hex << int(bytes[2])
                                   << ", only unsigned bytes (0x08) are supported");
  const int rank = bytes[3];
  PCNN_CHECK(rank >= 1 && rank <= 4, "'" << path << "' has an IDX rank of " << rank);
  PCNN_CHECK(bytes.size() >= 4 + 4 * size_t(rank), "'" << path << "' is truncated in its header");
  IdxArray a;
  size_t count = 1;
  for (int d = 0; d < rank; ++d) {
    const uint8_t* p = &bytes[4 + 4 * d];
    const uint32_t dim = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
    PCNN_CHECK(dim > 0 && dim < (1u << 30), "'" << path << "' has a bad dimension " << dim);
    a.dims.push_back(int(dim));
    count *= dim;
  }
  const size_t header = 4 + 4 * size_t(rank);
  PCNN_CHECK(bytes.size() == header + count,
             "'" << path << "' has " << bytes.size() - header << " data bytes, its header says "
                 << count << (bytes.size() < header + count ? " (truncated file)" : ""));
  bytes.erase(bytes.begin(), bytes.begin() + std::ptrdiff_t(header));  // in place: no 2nd copy
  a.data = std::move(bytes);
  return a;
}

}  // namespace pcnn
