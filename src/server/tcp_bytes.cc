#include "server/tcp_bytes.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstddef>

namespace gpuwatch::server {

std::uint64_t TcpBytesRead(int fd) {
  struct tcp_info info {};
  socklen_t len = sizeof info;
  if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return 0;
  if (len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) {
    return 0;
  }
  int queued = 0;
  if (ioctl(fd, FIONREAD, &queued) != 0 || queued < 0) queued = 0;
  const auto waiting = static_cast<std::uint64_t>(queued);
  return info.tcpi_bytes_received > waiting ? info.tcpi_bytes_received - waiting : 0;
}

}  // namespace gpuwatch::server
