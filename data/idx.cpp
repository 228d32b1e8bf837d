// IDX reading through zlib's gz* API, which reads raw and gzipped files alike as a stream, so the
// header is checked (against the file's size, with overflow-safe products) before the payload is
// allocated or inflated.
#include "data/idx.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <memory>

#include "core/check.hpp"
#include "core/checked_math.hpp"

namespace pcnn {

namespace {
// Deflate's best case is 1032:1, so a gzip file of n bytes cannot hold more than 1032 * n.
constexpr uint64_t kDeflateMaxRatio = 1032;

struct GzClose {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzClose>;

// Reads up to n bytes; fewer only at the end of the data. A corrupt or cut gzip stream throws
// (zlib reports a cut stream as "unexpected end of file", which gzread returns as a short read).
size_t read_up_to(gzFile f, uint8_t* dst, size_t n, const std::string& path) {
  size_t got = 0;
  while (got < n) {
    const unsigned chunk = unsigned(std::min<size_t>(n - got, size_t(1) << 30));
    const int r = gzread(f, dst + got, chunk);
    int err = Z_OK;
    const char* msg = gzerror(f, &err);
    PCNN_CHECK(r >= 0 && err == Z_OK,
               "'" << path << "' is a corrupt or truncated gzip file (" << msg << ")");
    if (r == 0) break;
    got += size_t(r);
  }
  return got;
}

uint32_t big_endian_u32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}
}  // namespace

IdxArray read_idx(const std::string& path) {
  struct stat st {};
  PCNN_CHECK(stat(path.c_str(), &st) == 0, "cannot open '" << path << "'");
  PCNN_CHECK(S_ISREG(st.st_mode), "'" << path << "' is not a regular file");
  GzFile f(gzopen(path.c_str(), "rb"));
  PCNN_CHECK(f, "cannot open '" << path << "'");
  gzbuffer(f.get(), 1 << 17);  // fewer, larger reads of the compressed file

  // Magic: two zero bytes, a type code (0x08 = unsigned byte), the number of dimensions.
  uint8_t head[4 + 4 * 4];
  PCNN_CHECK(read_up_to(f.get(), head, 4, path) == 4,
             "'" << path << "' is too short to be an IDX file");
  PCNN_CHECK(head[0] == 0 && head[1] == 0,
             "'" << path << "' is not an IDX file (wrong magic number)");
  PCNN_CHECK(head[2] == 0x08, "'" << path << "' holds IDX type 0x" << std::hex << int(head[2])
                                  << ", only unsigned bytes (0x08) are supported");
  const int rank = head[3];
  PCNN_CHECK(rank >= 1 && rank <= 4, "'" << path << "' has an IDX rank of " << rank
                                         << " (1 to 4 supported)");
  const size_t header = 4 + 4 * size_t(rank);
  PCNN_CHECK(read_up_to(f.get(), head + 4, header - 4, path) == header - 4,
             "'" << path << "' is truncated in its header");

  IdxArray a;
  for (int d = 0; d < rank; ++d) {
    const uint32_t dim = big_endian_u32(&head[4 + 4 * d]);
    PCNN_CHECK(dim >= 1 && dim <= kMaxElements,
               "'" << path << "' has a bad dimension " << dim << " (dimension " << d << ")");
    a.dims.push_back(int(dim));
  }
  const auto count = checked_product(a.dims);
  PCNN_CHECK(count && *count <= kMaxIdxBytes,
             "'" << path << "' announces more than " << (kMaxIdxBytes >> 20)
                 << " MiB of data (a corrupt header or a decompression bomb)");
  // Everything the header claims is checked against the file before a byte is allocated.
  const uint64_t file_size = uint64_t(st.st_size);
  if (gzdirect(f.get())) {
    PCNN_CHECK(file_size == header + *count,
               "'" << path << "' has " << file_size - header << " data bytes, its header says "
                   << *count << (file_size < header + *count ? " (truncated file)" : ""));
  } else {
    PCNN_CHECK(*count <= file_size * kDeflateMaxRatio,
               "'" << path << "' announces " << *count << " bytes, more than a " << file_size
                   << "-byte gzip file can hold (corrupt header)");
  }
  a.data.resize(size_t(*count));
  const size_t got = read_up_to(f.get(), a.data.data(), a.data.size(), path);
  PCNN_CHECK(got == a.data.size(), "'" << path << "' has " << got << " data bytes, its header says "
                                       << *count << " (truncated file)");
  // One more byte tells a stream longer than its header; it also makes zlib read the gzip
  // trailer, so a bad CRC is caught here.
  uint8_t extra;
  PCNN_CHECK(read_up_to(f.get(), &extra, 1, path) == 0,
             "'" << path << "' holds more data than its header says (" << *count << " bytes)");
  return a;
}

}  // namespace pcnn
