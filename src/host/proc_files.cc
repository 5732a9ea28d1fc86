#include "host/proc_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace gpuwatch::host {
namespace {

Status FromErrno(int err, const std::string& what) {
  std::string msg = what + ": " + std::strerror(err);
  switch (err) {
    case ENOENT:
    case ESRCH:
    case ENOTDIR:
      return Status::NotFound(std::move(msg));
    case EACCES:
    case EPERM:
      return Status::PermissionDenied(std::move(msg));
    default:
      return Status::Unavailable(std::move(msg));
  }
}

// Reads `fd` to the end (procfs reports size 0, so no fstat), then closes it.
Result<std::string> ReadAllAndClose(int fd, const std::string& what) {
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return FromErrno(err, what);
    }
    if (n == 0) break;
    std::size_t room = kMaxProcFileBytes - text.size();
    text.append(buf, std::min(static_cast<std::size_t>(n), room));
    if (text.size() >= kMaxProcFileBytes) break;
  }
  ::close(fd);
  return text;
}

}  // namespace

Result<ProcDir> ProcDir::Open(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return FromErrno(errno, dir.string());
  return ProcDir(fd);
}

ProcDir::ProcDir(ProcDir&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

ProcDir& ProcDir::operator=(ProcDir&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

ProcDir::~ProcDir() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::string> ProcDir::Read(const char* name) const {
  int fd = ::openat(fd_, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FromErrno(errno, name);
  return ReadAllAndClose(fd, name);
}

Result<std::string> ReadWholeFile(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FromErrno(errno, path.string());
  return ReadAllAndClose(fd, path.string());
}

}  // namespace gpuwatch::host
