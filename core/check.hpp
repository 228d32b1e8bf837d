// Errors: the library throws pcnn::Error with one readable line; main() prints it and exits 1.
#pragma once

#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>

namespace pcnn {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Raised when a backend cannot run here (compiled in, but no GPU, say): tests report it as skipped.
class Unavailable : public Error {
 public:
  explicit Unavailable(const std::string& what) : Error(what) {}
};

// Raised when a backend cannot allocate memory (device or host): bytes is what was asked for, so
// whoever holds the context (a model, a batch size) can say what needed it.
class OutOfMemory : public Error {
 public:
  OutOfMemory(const std::string& what, size_t bytes) : Error(what), bytes_(bytes) {}
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_;
};

}  // namespace pcnn

// PCNN_CHECK(cond, "message " << value): throws pcnn::Error when cond is false.
#define PCNN_CHECK(cond, msg)                      \
  do {                                             \
    if (!(cond)) {                                 \
      std::ostringstream pcnn_check_os_;           \
      pcnn_check_os_ << msg;                       \
      throw ::pcnn::Error(pcnn_check_os_.str());   \
    }                                              \
  } while (0)
