// No fmt here: the fake NVML library compiles this file too.
#include "core/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace gpuwatch {
namespace {

std::string FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string Limit(std::size_t bytes) {
  if (bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

Status Check(const std::string& path, const struct stat& st, std::size_t max_bytes) {
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(path + " is " + FileKind(st.st_mode) + ", not a regular file");
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    return Status::InvalidArgument(path + " is " + std::to_string(st.st_size) +
                                   " bytes, larger than the " + Limit(max_bytes) +
                                   " such a file may be");
  }
  return Status::Ok();
}

Status CannotRead(const std::string& path, int error) {
  return Status::NotFound("cannot read " + path + ": " + std::strerror(error));
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Status CheckRegularFileOrAbsent(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return Status::Ok();  // absent, or said by whoever opens it
  if (S_ISREG(st.st_mode)) return Status::Ok();
  return Status::InvalidArgument(path + " is " + FileKind(st.st_mode) + ", not a regular file");
}

Status CheckTextFile(const std::string& path, std::size_t max_bytes) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return CannotRead(path, errno);
  return Check(path, st, max_bytes);
}

Result<std::string> ReadTextFile(const std::string& path, std::size_t max_bytes) {
  if (Status s = CheckTextFile(path, max_bytes); !s.ok()) return s;
  // O_NONBLOCK: should the path have become a FIFO since the check, opening
  // it does not wait for a writer; fstat below then refuses it.
  const Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) return CannotRead(path, errno);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return CannotRead(path, errno);
  if (Status s = Check(path, st, max_bytes); !s.ok()) return s;
  std::string text;
  char buf[16384];
  for (;;) {
    const ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return CannotRead(path, errno);
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {  // it grew while being read
      return Status::InvalidArgument(path + " is larger than the " + Limit(max_bytes) +
                                     " such a file may be");
    }
  }
  return text;
}

}  // namespace gpuwatch
