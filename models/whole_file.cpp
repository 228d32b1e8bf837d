#include "models/whole_file.hpp"

#include <sys/stat.h>

#include <fstream>

#include "core/check.hpp"

namespace pcnn {

std::string read_whole_file(const std::string& path, const std::string& what, uint64_t max_bytes) {
  struct stat st {};
  PCNN_CHECK(stat(path.c_str(), &st) == 0, "cannot open " << what << " '" << path << "'");
  PCNN_CHECK(S_ISREG(st.st_mode), what << " '" << path << "' is not a regular file");
  PCNN_CHECK(uint64_t(st.st_size) <= max_bytes,
             "'" << path << "' is " << st.st_size << " bytes, more than any " << what);
  std::ifstream in(path, std::ios::binary);
  PCNN_CHECK(in, "cannot open " << what << " '" << path << "'");
  std::string bytes(size_t(st.st_size), '\0');
  in.read(&bytes[0], std::streamsize(bytes.size()));
  PCNN_CHECK(in.gcount() == std::streamsize(bytes.size()), "cannot read " << what << " '" << path << "'");
  return bytes;
}

}  // namespace pcnn
