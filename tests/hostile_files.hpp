// Helpers of the hostile-input tests: scratch files, and the message a call is refused with,
// which must be one line (what `pcnn` prints after "pcnn: error: ").
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <memory>
#include <iterator>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "core/check.hpp"

namespace pcnn::test {

// Named by process, so suites of two build folders can run at the same time.
inline std::string scratch_path(const std::string& name) {
  return "/tmp/pcnn_hostile_" + std::to_string(getpid()) + "_" + name;
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every compiled-in backend that can run here (a GPU backend without a GPU is left out).
inline std::vector<std::unique_ptr<Backend>> usable_backends() {
  std::vector<std::unique_ptr<Backend>> all;
  for (const auto& b : compiled_backends()) {
    try {
      all.push_back(make_backend(b.name));
    } catch (const Unavailable&) {
    }
  }
  return all;
}

// The pcnn::Error message f throws ("" when it returns). Any other exception fails the test: a
// hostile input must be refused with our one-line error, never a library's own exception.
inline std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK_MESSAGE(what.find('\n') == std::string::npos, "multi-line error: " << what);
    return what;
  }
  return "";
}

// Checks that f is refused with a message that contains every one of the words.
#define PCNN_CHECK_REFUSED(f, ...)                                                      \
  do {                                                                                  \
    const std::string pcnn_msg_ = ::pcnn::test::refusal(f);                             \
    CHECK_MESSAGE(!pcnn_msg_.empty(), "accepted, expected a refusal");                  \
    for (const std::string& pcnn_w_ : std::initializer_list<std::string>{__VA_ARGS__}) \
      CHECK_MESSAGE(pcnn_msg_.find(pcnn_w_) != std::string::npos,                       \
                    "'" << pcnn_w_ << "' missing from: " << pcnn_msg_);                 \
  } while (0)

}  // namespace pcnn::test
