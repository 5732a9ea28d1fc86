#include "server/tcp_bytes.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

namespace gpuwatch::server {

std::uint64_t TcpBytesReceived(int fd) {
  struct tcp_info info {};
  socklen_t len = sizeof info;
  if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return 0;
  if (len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) {
    return 0;
  }
  return info.tcpi_bytes_received;
}

}  // namespace gpuwatch::server
