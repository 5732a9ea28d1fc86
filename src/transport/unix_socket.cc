#include "transport/unix_socket.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace gpuwatch {
namespace {

Result<sockaddr_un> Address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return Status::InvalidArgument(fmt::format("socket path {} is too long (at most {} bytes)",
                                               path, sizeof addr.sun_path - 1));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

}  // namespace

Result<int> ListenUnix(const std::string& path) {
  auto addr = Address(path);
  if (!addr) return addr.error();
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0 ||
      listen(fd, 128) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) close(fd);
    return Status::Unavailable(fmt::format("cannot listen on {}: {}", path, why));
  }
  return fd;
}

Result<int> ConnectUnix(const std::string& path) {
  auto addr = Address(path);
  if (!addr) return addr.error();
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) close(fd);
    return Status::Unavailable(fmt::format("cannot connect to {}: {}", path, why));
  }
  return fd;
}

bool UnixSocketAnswers(const std::string& path) {
  auto fd = ConnectUnix(path);
  if (!fd) return false;
  close(*fd);
  return true;
}

std::optional<uid_t> PeerUid(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return std::nullopt;
  return cred.uid;
}

Status ClearStaleSocket(const std::string& path, const std::string& what) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(path, ec);
  if (ec || !std::filesystem::exists(status)) return Status::Ok();
  if (status.type() != std::filesystem::file_type::socket) {
    return Status::InvalidArgument(
        fmt::format("{} {}: a file that is not a socket is in the way", what, path));
  }
  if (UnixSocketAnswers(path)) {
    return Status::Unavailable(fmt::format("{} {}: another process serves it", what, path));
  }
  std::filesystem::remove(path, ec);  // left behind by a process that died
  return Status::Ok();
}

WakePipe::WakePipe() {
  if (pipe2(fds_, O_CLOEXEC) != 0) fds_[0] = fds_[1] = -1;
}

WakePipe::~WakePipe() {
  for (int fd : fds_) {
    if (fd >= 0) close(fd);
  }
}

void WakePipe::Wake() {
  if (fds_[1] < 0) return;
  const char b = 1;
  [[maybe_unused]] auto n = write(fds_[1], &b, 1);
}

}  // namespace gpuwatch
