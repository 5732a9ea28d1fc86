#include "server/tcp_bytes.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstddef>

namespace gpuwatch::server {

namespace {

// tcpi_bytes_received; none when `fd` is not a TCP socket or the kernel is
// older than 4.1.
bool BytesReceived(int fd, std::uint64_t& out) {
  struct tcp_info info {};
  socklen_t len = sizeof info;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return false;
  if (len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) {
    return false;
  }
  out = info.tcpi_bytes_received;
  return true;
}

// What waits in the socket's queue (FIONREAD); 0 when the kernel does not say.
std::uint64_t Queued(int fd) {
  int queued = 0;
  if (ioctl(fd, FIONREAD, &queued) != 0 || queued < 0) return 0;
  return static_cast<std::uint64_t>(queued);
}

}  // namespace

std::uint64_t TcpBytesRead(int fd) {
  if (fd < 0) return 0;
  // The count and the queue are two calls: bytes arriving between them would
  // be in one and not the other (a keep-alive client's next request, sent the
  // moment it has its answer, then looked pipelined). When the caller is the
  // socket's only reader (a worker between requests), the queue can only grow
  // while it asks: the count is taken between two equal queue lengths, so
  // nothing arrived meanwhile. (FIONREAD twice costs less than TCP_INFO twice;
  // a caller racing the reader, the shedder, gets an estimate, as it needs.)
  std::uint64_t received = 0, queued = 0;
  for (int attempt = 0; attempt < 64; ++attempt) {
    const std::uint64_t before = Queued(fd);
    if (!BytesReceived(fd, received)) return 0;
    queued = Queued(fd);
    if (queued == before) break;
  }
  return received > queued ? received - queued : 0;
}

}  // namespace gpuwatch::server
