// The probe is a real file (mkstemp), not access(2): access ignores read-only mounts and
// answers for the real rather than the effective user.
#include "apps/pcnn/output_paths.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/check.hpp"

namespace pcnn::cli {

void check_output_path(const std::string& option, const std::string& path) {
  const std::string at = option + ": cannot write '" + path + "': ";
  PCNN_CHECK(!path.empty() && path.back() != '/', at << "it names a folder, not a file");
  const size_t slash = path.find_last_of('/');
  const std::string folder =
      slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat st {};
  PCNN_CHECK(stat(folder.c_str(), &st) == 0, at << "folder '" << folder << "': "
                                                << std::strerror(errno));
  PCNN_CHECK(S_ISDIR(st.st_mode), at << "'" << folder << "' is not a folder");
  if (stat(path.c_str(), &st) == 0) {
    PCNN_CHECK(S_ISREG(st.st_mode), at << "it exists and is not a regular file");
    PCNN_CHECK(access(path.c_str(), W_OK) == 0, at << std::strerror(errno));
  }
  std::string probe = folder + "/.pcnn-write-check-XXXXXX";
  const int fd = mkstemp(&probe[0]);
  PCNN_CHECK(fd >= 0, at << "cannot create files in '" << folder << "': " << std::strerror(errno));
  close(fd);
  unlink(probe.c_str());
}

}  // namespace pcnn::cli
