// Cache entries: "PCNNIDX1", the source's size and mtime (ns) and path, the dims, the payload's
// CRC-32, then the payload; all integers little-endian 64-bit. The file name is a hash of the
// key, so a changed source simply misses; the stored key is compared too (hash collisions).
#include "data/idx_cache.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/checked_math.hpp"
#include "models/atomic_write.hpp"

namespace pcnn {

namespace {
constexpr char kMagic[8] = {'P', 'C', 'N', 'N', 'I', 'D', 'X', '1'};

struct SourceKey {
  std::string path;
  uint64_t size = 0, mtime_ns = 0;
};

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(char(v >> (8 * i)));
}

// Reads from a byte range, refusing to go past its end.
struct Reader {
  const std::string& bytes;
  size_t at = 0;
  bool ok = true;
  uint64_t u64() {
    if (bytes.size() - at < 8) return ok = false, 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(bytes[at + i])) << (8 * i);
    at += 8;
    return v;
  }
  std::string text(uint64_t n) {
    if (bytes.size() - at < n) return ok = false, std::string();
    std::string s = bytes.substr(at, size_t(n));
    at += size_t(n);
    return s;
  }
};

uint32_t crc_of(const uint8_t* p, size_t n) {
  return uint32_t(crc32_z(crc32_z(0, nullptr, 0), p, n));
}

std::string entry_name(const SourceKey& k) {
  // FNV-1a over the key: a name, not a check (the entry holds the key itself).
  uint64_t h = 1469598103934665603ull;
  const auto mix = [&](const void* p, size_t n) {
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const uint8_t*>(p)[i]) * 1099511628211ull;
  };
  mix(k.path.data(), k.path.size());
  mix(&k.size, sizeof k.size);
  mix(&k.mtime_ns, sizeof k.mtime_ns);
  char name[40];
  std::snprintf(name, sizeof name, "idx-%016llx.bin", static_cast<unsigned long long>(h));
  return name;
}

std::string encode(const SourceKey& k, const IdxArray& a) {
  std::string out(kMagic, sizeof kMagic);
  put_u64(out, k.size);
  put_u64(out, k.mtime_ns);
  put_u64(out, k.path.size());
  out += k.path;
  put_u64(out, a.dims.size());
  for (int d : a.dims) put_u64(out, uint64_t(d));
  put_u64(out, crc_of(a.data.data(), a.data.size()));
  out.append(reinterpret_cast<const char*>(a.data.data()), a.data.size());
  return out;
}

// The entry's header (from its first bytes): the dims and CRC, and where the payload starts;
// false when it is not an entry for this key.
struct EntryHead {
  std::vector<int> dims;
  uint64_t count = 0, crc = 0;
  size_t payload_at = 0;
};

bool parse_head(const std::string& bytes, const SourceKey& k, EntryHead& h) {
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return false;
  Reader r{bytes, sizeof kMagic};
  const uint64_t size = r.u64(), mtime = r.u64(), path_len = r.u64();
  if (!r.ok || size != k.size || mtime != k.mtime_ns || path_len != k.path.size()) return false;
  if (r.text(path_len) != k.path || !r.ok) return false;
  const uint64_t rank = r.u64();
  if (!r.ok || rank < 1 || rank > 4) return false;
  for (uint64_t d = 0; d < rank; ++d) {
    const uint64_t dim = r.u64();
    if (!r.ok || dim < 1 || dim > kMaxElements) return false;
    h.dims.push_back(int(dim));
  }
  const auto count = checked_product(h.dims);
  h.crc = r.u64();
  if (!r.ok || !count || *count > kMaxIdxBytes) return false;
  h.count = *count;
  h.payload_at = r.at;
  return true;
}

// The entry's array, read straight into place, or false when the file is not a whole entry
// for this key (wrong key, other size, bad CRC).
bool read_entry(const std::string& entry, const SourceKey& k, IdxArray& a) {
  std::ifstream in(entry, std::ios::binary | std::ios::ate);
  if (!in) return false;
  const std::streamoff file_size = in.tellg();
  in.seekg(0);
  // The header: magic, 3 numbers, the path, the rank, 4 dims at most, the CRC.
  std::string head(size_t(std::min<std::streamoff>(file_size, 8 * 10 + 8 + k.path.size())), '\0');
  EntryHead h;
  if (!in.read(head.data(), std::streamsize(head.size())) || !parse_head(head, k, h) ||
      uint64_t(file_size) != h.payload_at + h.count)
    return false;
  a.dims = h.dims;
  a.data.resize(size_t(h.count));
  const size_t have = head.size() - h.payload_at;  // payload bytes read with the header
  std::memcpy(a.data.data(), head.data() + h.payload_at, have);
  if (!in.read(reinterpret_cast<char*>(a.data.data() + have), std::streamsize(h.count - have)))
    return false;
  return crc_of(a.data.data(), a.data.size()) == h.crc;
}

// mkdir -p; false when the folder cannot be had.
bool make_folder(const std::string& dir) {
  for (size_t at = 1; at <= dir.size(); ++at)
    if (at == dir.size() || dir[at] == '/') {
      const std::string part = dir.substr(0, at);
      struct stat st {};
      if (stat(part.c_str(), &st) != 0 && mkdir(part.c_str(), 0755) != 0 && errno != EEXIST)
        return false;
    }
  struct stat st {};
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
}  // namespace

std::string default_idx_cache_dir() {
  if (const char* d = std::getenv("PCNN_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/pcnn";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/pcnn";
  return "";
}

IdxArray read_idx_cached(const std::string& path, const std::string& cache_dir, bool* hit) {
  if (hit) *hit = false;
  struct stat st {};
  char* real = realpath(path.c_str(), nullptr);
  if (cache_dir.empty() || !real || stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::free(real);
    return read_idx(path);  // its errors, as without a cache
  }
  SourceKey key{real, uint64_t(st.st_size),
                uint64_t(st.st_mtim.tv_sec) * 1000000000ull + uint64_t(st.st_mtim.tv_nsec)};
  std::free(real);
  const std::string entry = cache_dir + "/" + entry_name(key);
  IdxArray a;
  if (read_entry(entry, key, a)) {
    if (hit) *hit = true;
    return a;
  }
  a = read_idx(path);
  if (make_folder(cache_dir)) {
    try {
      write_file_atomically(entry, encode(key, a));
    } catch (const std::exception&) {
      // A full disk or a read-only cache: the data is read; the next run decodes again.
    }
  }
  return a;
}

}  // namespace pcnn
