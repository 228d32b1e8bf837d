// Hostile IDX files: sizes that wrap, headers that lie, gzip bombs, corrupt streams, labels
// outside the model's classes. Each is refused with one line naming the file and the fault.
#include <fcntl.h>
#include <sys/stat.h>
#include <zlib.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "data/dataset.hpp"
#include "data/idx.hpp"
#include "data/idx_cache.hpp"
#include "data/idx_files.hpp"
#include "tests/hostile_files.hpp"

namespace pcnn::test {

namespace {
std::string idx_header(const std::vector<uint32_t>& dims) {
  std::string b = {0, 0, 0x08, char(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(char(d >> s));
  return b;
}

// Gzips a header followed by `zeros` zero bytes, streamed so the test never holds them all.
void write_gz(const std::string& path, const std::string& head, size_t zeros) {
  gzFile f = gzopen(path.c_str(), "wb1");
  REQUIRE(f != nullptr);
  gzwrite(f, head.data(), unsigned(head.size()));
  const std::string block(1 << 20, '\0');
  for (size_t left = zeros; left > 0; left -= std::min(left, block.size()))
    gzwrite(f, block.data(), unsigned(std::min(left, block.size())));
  gzclose(f);
}
}  // namespace

TEST_SUITE("core") {

TEST_CASE("IDX: dimensions whose product wraps past 2^64 are refused from the header") {
  // 2^22 * 2^21 * 2^21 = 2^64, which wrapped to 0 and matched an empty payload.
  const std::string p = scratch_path("wrap.idx");
  write_bytes(p, idx_header({1u << 22, 1u << 21, 1u << 21}));
  PCNN_CHECK_REFUSED([&] { read_idx(p); }, p, "announces more than");
  write_bytes(p, idx_header({0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff}));
  PCNN_CHECK_REFUSED([&] { read_idx(p); }, "announces more than");
  write_bytes(p, idx_header({0x80000000u}));
  PCNN_CHECK_REFUSED([&] { read_idx(p); }, "bad dimension 2147483648");
  write_bytes(p, idx_header({4, 0, 2}));
  PCNN_CHECK_REFUSED([&] { read_idx(p); }, "bad dimension 0");
  write_bytes(p, std::string{0, 0, 0x08, 0});
  PCNN_CHECK_REFUSED([&] { read_idx(p); }, "rank of 0");
  write_bytes(p, idx_header({3, 2}).substr(0, 9));
  PCNN_CHECK_REFUSED([&] { read_idx(p); }, "truncated in its header");
}

TEST_CASE("IDX: a gzip bomb is refused right after its header") {
  const std::string p = scratch_path("bomb.idx.gz");
  // 256 MiB of zeros: the header is all zeros too, so its type byte fails after 4 inflated bytes.
  write_gz(p, "", size_t(256) << 20);
  auto t0 = std::chrono::steady_clock::now();
  PCNN_CHECK_REFUSED([&] { read_idx(p); }, "holds IDX type 0x0");
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  // A valid header for 100 bytes, then 64 MiB: reading stops one byte past the promise.
  write_gz(p, idx_header({10, 10}), size_t(64) << 20);
  t0 = std::chrono::steady_clock::now();
  PCNN_CHECK_REFUSED([&] { read_idx(p); }, "more data than its header says");
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  // A header promising 1e8 bytes from a file of ~100: more than deflate can expand to.
  write_gz(p, idx_header({1000, 1000, 100}), 0);
  PCNN_CHECK_REFUSED([&] { read_idx(p); }, "more than a", "gzip file can hold");
  // Past the 1 GiB cap whatever the file size.
  write_gz(p, idx_header({1 << 15, 1 << 15, 2}), 0);
  PCNN_CHECK_REFUSED([&] { read_idx(p); }, "announces more than 1024 MiB");
  std::remove(p.c_str());
}

TEST_CASE("IDX: gzip streams that are cut, corrupt or followed by junk") {
  const std::string raw = idx_header({2, 3}) + "abcdef";
  const std::string p = scratch_path("stream.idx.gz");
  write_gz(p, raw, 0);
  const std::string gz = read_bytes(p);
  CHECK(read_idx(p).data.size() == 6);
  // Bytes after the end of the gzip stream are ignored, as gzip -d ignores them.
  write_bytes(p, gz + "trailing junk");
  CHECK(read_idx(p).data.size() == 6);
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 6] ^= 0x55;  // inside the trailer's CRC-32
  write_bytes(p, bad_crc);
  PCNN_CHECK_REFUSED([&] { read_idx(p); }, "corrupt or truncated gzip");
  write_bytes(p, gz.substr(0, gz.size() - 9));  // cut inside the trailer
  PCNN_CHECK_REFUSED([&] { read_idx(p); }, "gzip");
  write_bytes(p, gz.substr(0, 12));  // cut inside the deflate stream's first block
  PCNN_CHECK_REFUSED([&] { read_idx(p); }, p);
  // Raw files: every byte past the header's promise is an error.
  write_bytes(p, raw + "x");
  PCNN_CHECK_REFUSED([&] { read_idx(p); }, "7 data bytes, its header says 6");
  PCNN_CHECK_REFUSED([&] { read_idx("/tmp"); }, "not a regular file");
}

TEST_CASE("labels outside the model's classes are refused, naming the file, label and item") {
  const std::string im = scratch_path("im.idx"), lb = scratch_path("lb.idx");
  write_bytes(im, idx_header({4, 2, 2}) + std::string(16, '\x07'));
  write_bytes(lb, idx_header({4}) + std::string{0, 3, 9, 2});
  const Dataset d = load_idx_pair(im, lb);
  CHECK(d.labels_file == lb);
  d.check_labels(10);
  PCNN_CHECK_REFUSED([&] { d.check_labels(5); }, lb, "label 9 (item 2)", "outside the 5 classes 0..4");
  PCNN_CHECK_REFUSED([&] { load_idx_pair(im, lb, 3); }, "label 3 (item 1)");
  CHECK(load_idx_pair(im, lb, 26).classes == 26);  // more classes than Fashion-MNIST: fine
  // The hash of the labels tells data sets apart.
  write_bytes(lb, idx_header({4}) + std::string{0, 3, 9, 1});
  CHECK(load_idx_pair(im, lb).labels_crc32() != d.labels_crc32());
}

TEST_CASE("IDX files read at once: every file's data, and the first failing path's error") {
  const std::string a = scratch_path("many_a.idx"), b = scratch_path("many_b.idx.gz"),
                    c = scratch_path("many_c.idx"), d = scratch_path("many_d.idx");
  write_bytes(a, idx_header({3, 2}) + std::string{1, 2, 3, 4, 5, 6});
  write_gz(b, idx_header({2}) + std::string{7, 8}, 0);
  write_bytes(c, idx_header({5}).substr(0, 6));  // cut in its header
  write_bytes(d, std::string{1, 2, 3, 4});       // not IDX
  std::vector<FileLoad> loads;
  const std::vector<IdxArray> got = read_idx_files({a, b}, &loads);
  REQUIRE(got.size() == 2);
  CHECK(got[0].dims == std::vector<int>{3, 2});
  CHECK(got[0].data[5] == 6);
  CHECK(got[1].data == std::vector<uint8_t>{7, 8});
  REQUIRE(loads.size() == 2);
  CHECK(loads[1].path == b);
  CHECK(loads[0].end >= loads[0].start);
  // Two bad files: whichever thread fails first, the error is that of the earlier path.
  for (int i = 0; i < 20; ++i) {
    PCNN_CHECK_REFUSED([&] { read_idx_files({a, d, b, c}); }, d, "wrong magic number");
    PCNN_CHECK_REFUSED([&] { read_idx_files({c, a, d}); }, c, "truncated in its header");
  }
}

TEST_CASE("pixel statistics: the histogram's sums equal a direct pass in double") {
  Dataset d;
  d.count = 1500;  // past the 1024 images after which the 32-bit counts are flushed
  d.channels = 3;
  d.height = 5;
  d.width = 7;
  d.images.resize(d.count * d.image_size());
  uint32_t state = 12345;
  for (uint8_t& v : d.images) {
    state = state * 1664525u + 1013904223u;
    v = uint8_t(state >> 24);
  }
  const auto direct = [&](int channel, double& mean, double& sd) {
    double sum = 0, sq = 0, n = 0;
    const size_t plane = size_t(d.height) * d.width;
    for (int i = 0; i < d.count; ++i)
      for (int c = 0; c < d.channels; ++c) {
        if (channel >= 0 && c != channel) continue;
        for (size_t k = 0; k < plane; ++k) {
          const double x = d.images[(size_t(i) * d.channels + c) * plane + k] / 255.0;
          sum += x;
          sq += x * x;
          n += 1;
        }
      }
    mean = sum / n;
    sd = std::sqrt(sq / n - mean * mean);
  };
  const Normalization n = normalization_of(d);
  double mean = 0, sd = 0;
  direct(-1, mean, sd);
  CHECK(n.mean == doctest::Approx(mean).epsilon(1e-6));
  CHECK(n.inv_std == doctest::Approx(1 / sd).epsilon(1e-6));
  REQUIRE(n.channel_mean.size() == 3);
  for (int c = 0; c < 3; ++c) {
    direct(c, mean, sd);
    CHECK(n.channel_mean[c] == doctest::Approx(mean).epsilon(1e-6));
    CHECK(n.channel_inv_std[c] == doctest::Approx(1 / sd).epsilon(1e-6));
  }
}

TEST_CASE("IDX cache: a hit needs the same path, size and mtime and a whole entry") {
  const std::string src = scratch_path("cached.idx"), dir = scratch_path("idx_cache_dir");
  const std::string rm = "rm -rf '" + dir + "'";
  REQUIRE(std::system(rm.c_str()) == 0);
  const std::string first = idx_header({2, 3}) + std::string{1, 2, 3, 4, 5, 6};
  write_bytes(src, first);
  bool hit = true;
  const IdxArray a = read_idx_cached(src, dir, &hit);  // a miss: decoded, then kept
  CHECK(a.data == read_idx(src).data);
  CHECK(!hit);
  const auto mtime_of = [](const std::string& p) {
    struct stat st {};
    REQUIRE(stat(p.c_str(), &st) == 0);
    return st.st_mtim;
  };
  const timespec kept = mtime_of(src);
  const auto set_mtime = [&](const timespec& t) {
    const timespec times[2] = {t, t};
    REQUIRE(utimensat(AT_FDCWD, src.c_str(), times, 0) == 0);
  };
  // Same size and mtime, other bytes: the entry is what is read (the key is all that is checked
  // of the source; tools that rewrite a file in place change its mtime).
  write_bytes(src, idx_header({2, 3}) + std::string{9, 9, 9, 9, 9, 9});
  set_mtime(kept);
  CHECK(read_idx_cached(src, dir, &hit).data == a.data);
  CHECK(hit);
  // Another mtime: a miss, the new bytes.
  timespec later = kept;
  later.tv_sec += 10;
  set_mtime(later);
  CHECK(read_idx_cached(src, dir).data == std::vector<uint8_t>(6, 9));
  // A corrupt entry (one payload byte changed) is decoded again, never used.
  const std::string find = "ls '" + dir + "'/idx-*.bin > '" + dir + "/list'";
  REQUIRE(std::system(find.c_str()) == 0);
  std::ifstream list(dir + "/list");
  int entries = 0;
  for (std::string entry; std::getline(list, entry); ++entries) {
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put(char(0x77));
  }
  CHECK(entries == 2);
  CHECK(read_idx_cached(src, dir).data == std::vector<uint8_t>(6, 9));
  // A cache folder that cannot be made: the data all the same; a bad source: read_idx's error.
  CHECK(read_idx_cached(src, src + "/cannot").data == std::vector<uint8_t>(6, 9));
  write_bytes(src, std::string{1, 2, 3, 4});
  PCNN_CHECK_REFUSED([&] { read_idx_cached(src, dir); }, src, "wrong magic number");
}

}  // TEST_SUITE

}  // namespace pcnn::test
