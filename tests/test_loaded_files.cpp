// Reading files whole and opening shared libraries on first use: read_whole_file (models/) takes
// a regular file up to its limit and refuses the rest with one line; DynamicLibrary and its
// macros (backends/cuda/dynamic_library.hpp, the GPU backends' loaders) open the first name that
// loads and, when none does, answer with a line naming the library and why.
#include <cstdio>
#include <cstring>

#include "backends/cuda/dynamic_library.hpp"
#include "models/whole_file.hpp"
#include "tests/hostile_files.hpp"

// A library no machine has, as a loader sees a missing cuDNN: its accessor, error string and
// one forwarded entry point, defined as the loaders define theirs.
PCNN_DYNAMIC_LIBRARY(absent_library, "libpcnn-absent-test.so.0", "libpcnn-absent-test.so")
PCNN_DYNAMIC_ERROR_STRING(absent_library(), "absent", pcnn_test_absent_error_string, int)
PCNN_DYNAMIC_FORWARD(absent_library(), int, pcnn_test_absent_call, -7, (int a, int b), (a, b))

namespace pcnn::test {

TEST_SUITE("core") {

TEST_CASE("read_whole_file: a regular file within its limit whole, anything else one line") {
  const std::string path = scratch_path("whole_file.bin");
  const std::string bytes = std::string("head\0tail", 9) + std::string(1000, '\xa5');
  write_bytes(path, bytes);
  CHECK(read_whole_file(path, "test file", bytes.size()) == bytes);
  PCNN_CHECK_REFUSED([&] { read_whole_file(path, "test file", bytes.size() - 1); },
                     "is 1009 bytes, more than any test file", path);
  std::remove(path.c_str());
  PCNN_CHECK_REFUSED([&] { read_whole_file(path, "test file", 100); }, "cannot open test file",
                     path);
  PCNN_CHECK_REFUSED([&] { read_whole_file("/tmp", "test file", 100); },
                     "test file '/tmp' is not a regular file");
}

TEST_CASE("dynamic library: the first name that opens; without one, every call says why") {
  // The C library is in every process; the absent name before it is tried first and passed over.
  const cuda::DynamicLibrary libc{"libpcnn-absent-test.so.0", "libc.so.6"};
  REQUIRE(libc.loaded());
  using Strlen = size_t (*)(const char*);
  const Strlen found = libc.symbol<Strlen>("strlen");
  REQUIRE(bool(found));  // (doctest prints no function pointers)
  CHECK(found("seven c") == 7);
  CHECK_FALSE(bool(libc.symbol<Strlen>("pcnn_no_such_symbol")));

  CHECK_FALSE(absent_library().loaded());
  CHECK_FALSE(bool(absent_library().symbol<Strlen>("strlen")));
  const std::string why = absent_library().error();
  CHECK(why.find("libpcnn-absent-test.so.0") != std::string::npos);  // the first, and why
  CHECK(why.find("also tried libpcnn-absent-test.so") != std::string::npos);
  const std::string message = pcnn_test_absent_error_string(3);
  CHECK(message == "the absent library could not be loaded (" + why + ")");
  CHECK(message.find('\n') == std::string::npos);
  CHECK(pcnn_test_absent_call(1, 2) == -7);  // the status a missing library answers with
}

}  // TEST_SUITE

}  // namespace pcnn::test
