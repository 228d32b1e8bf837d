// POSIX calls rather than std::ofstream: a stream cannot fsync, and an unsynced rename can leave
// an empty file under the new name after a power cut.
#include "models/atomic_write.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/check.hpp"

namespace pcnn {

namespace {
// Closes the descriptor on every path out.
struct Fd {
  int fd;
  ~Fd() { if (fd >= 0) ::close(fd); }
};

std::string folder_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

void write_all(int fd, const std::string& bytes, const std::string& tmp) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    PCNN_CHECK(n > 0, "writing '" << tmp << "' failed: " << std::strerror(errno));
    done += size_t(n);
  }
}
}  // namespace

void write_file_atomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  {
    Fd f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    PCNN_CHECK(f.fd >= 0, "cannot write '" << tmp << "': " << std::strerror(errno));
    try {
      write_all(f.fd, bytes, tmp);
      PCNN_CHECK(::fsync(f.fd) == 0, "fsync of '" << tmp << "' failed: " << std::strerror(errno));
    } catch (const Error&) {
      std::remove(tmp.c_str());
      throw;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw Error("cannot move '" + tmp + "' to '" + path + "': " + std::strerror(err));
  }
  const std::string folder = folder_of(path);
  Fd dir{::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  PCNN_CHECK(dir.fd >= 0 && ::fsync(dir.fd) == 0,
             "fsync of the folder '" << folder << "' failed: " << std::strerror(errno));
}

}  // namespace pcnn
