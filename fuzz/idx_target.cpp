// Fuzz target: read_idx on a file holding the input, raw or gzipped (read_idx takes a path,
// because its gzip detection, size checks and streaming all start from the file).
#include <unistd.h>
#include <zlib.h>

#include <cstdio>

#include "core/check.hpp"
#include "data/idx.hpp"
#include "fuzz/targets.hpp"

namespace pcnn::fuzz {

void idx_target(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const std::string path = "/tmp/pcnn_fuzz_idx_" + std::to_string(getpid());
  if (data[0] & 1) {
    FILE* f = std::fopen(path.c_str(), "wb");
    require(f && std::fwrite(data + 1, 1, size - 1, f) == size - 1, "cannot write " + path);
    std::fclose(f);
  } else {
    gzFile f = gzopen(path.c_str(), "wb1");
    require(f && gzwrite(f, data + 1, unsigned(size - 1)) == int(size - 1), "cannot write " + path);
    gzclose(f);
  }
  try {
    const IdxArray a = read_idx(path);
    uint64_t n = 1;
    for (int d : a.dims) n *= uint64_t(d);  // accepted dims multiply to at most 1 GiB
    require(!a.dims.empty() && a.data.size() == n, "read_idx returned data that disagrees with its dims");
  } catch (const Error&) {
  }
  std::remove(path.c_str());
}

}  // namespace pcnn::fuzz
