// Replays every input in fuzz/corpus/ (the seeds, and the fuzzers' minimised corpora) and
// fuzz/regressions/ (each crash a fuzzer ever found, kept after its fix) through the fuzz
// targets, in every build: a regression shows up in ctest without clang or a fuzzing run. The
// model specs run on every backend usable here, not only the serial one the fuzzer used.
#include <dirent.h>

#include <algorithm>
#include <functional>

#include "fuzz/targets.hpp"
#include "tests/hostile_files.hpp"

namespace pcnn::test {

namespace {
std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> files;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d))
      if (e->d_name[0] != '.') files.push_back(dir + "/" + e->d_name);
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Runs each file of fuzz/corpus/<name> and fuzz/regressions/<name>; returns how many ran.
size_t replay(const std::string& name, const std::function<void(const uint8_t*, size_t)>& target) {
  size_t count = 0;
  for (const char* kind : {"/corpus/", "/regressions/"})
    for (const std::string& f : files_in(PCNN_FUZZ_DIR + std::string(kind) + name)) {
      const std::string bytes = read_bytes(f);
      INFO(f);
      CHECK_NOTHROW(target(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
      ++count;
    }
  return count;
}
}  // namespace

TEST_SUITE("core") {

TEST_CASE("fuzz corpora and regressions replay without a finding") {
  CHECK(replay("idx", fuzz::idx_target) >= 5);
  CHECK(replay("model_file", fuzz::model_file_target) >= 2);
  CHECK(replay("cifar", fuzz::cifar_target) >= 4);
  CHECK(replay("png", fuzz::png_target) >= 6);
  CHECK(replay("jpeg", fuzz::jpeg_target) >= 6);
  for (const auto& be : usable_backends()) {
    INFO("backend " << be->name());
    CHECK(replay("model_spec", [&](const uint8_t* d, size_t n) { fuzz::model_spec_check(*be, d, n); }) >= 6);
  }
}

}  // TEST_SUITE

}  // namespace pcnn::test
