#include "tui/connect_reason.h"

#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace gpuwatch::tui {
namespace {

// A file descriptor, closed when it goes.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

std::string WhyNoConnection(const std::string& host, int port, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    return fmt::format("cannot resolve {}: {}", host, gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, &freeaddrinfo);
  int error = 0;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    Fd s{socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol)};
    if (s.fd < 0) {
      error = errno;
      continue;
    }
    if (connect(s.fd, a->ai_addr, a->ai_addrlen) == 0) return "";
    if (errno != EINPROGRESS) {
      error = errno;
      continue;
    }
    pollfd p{s.fd, POLLOUT, 0};
    const int ready = poll(&p, 1, static_cast<int>(timeout.count()));
    if (ready == 0) {
      error = ETIMEDOUT;
      continue;
    }
    socklen_t len = sizeof error;
    if (ready < 0 || getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) error = errno;
    if (error == 0) return "";
  }
  switch (error) {
    case ECONNREFUSED:
      return "connection refused";
    case ETIMEDOUT:
      return "timed out after " + Duration(timeout);
    case EHOSTUNREACH:
      return "no route to host";
    case ENETUNREACH:
      return "network unreachable";
    default:
      return fmt::format("cannot connect: {}", std::strerror(error));
  }
}

// "2 s", "500 ms", "1.5 s".
std::string Duration(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return fmt::format("{} s", d.count() / 1000);
  if (d.count() < 1000) return fmt::format("{} ms", d.count());
  return fmt::format("{:.1f} s", static_cast<double>(d.count()) / 1000);
}

}  // namespace gpuwatch::tui
