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

}  // namespace

std::uint64_t TcpBytesRead(int fd) {
  if (fd < 0) return 0;
  // The count and the queue are two calls: bytes arriving between them would
  // be in the queue but not in the count, and make what was read look
  // smaller by their size (a keep-alive client's next request, sent the
  // moment it has its answer, then looked pipelined). So the queue is read
  // between two equal counts: nothing arrived meanwhile.
  std::uint64_t before = 0, after = 0;
  int queued = 0;
  for (int attempt = 0; attempt < 64; ++attempt) {
    if (!BytesReceived(fd, before)) return 0;
    if (ioctl(fd, FIONREAD, &queued) != 0 || queued < 0) queued = 0;
    if (!BytesReceived(fd, after)) return 0;
    if (after == before) break;
  }
  const auto waiting = static_cast<std::uint64_t>(queued);
  return after > waiting ? after - waiting : 0;
}

}  // namespace gpuwatch::server
