// How many bytes a TCP socket has received since it was opened (Linux
// TCP_INFO's tcpi_bytes_received, kernel 4.1+): what bounds a request whose
// bytes cpp-httplib reads where we cannot see them (TLS included). Its own
// file: the struct with that field is <linux/tcp.h>'s, which cannot share a
// translation unit with glibc's <netinet/tcp.h> (included by httplib.h).
#pragma once

#include <cstdint>

namespace gpuwatch::server {

// 0 when `fd` is not a TCP socket or the kernel does not say.
std::uint64_t TcpBytesReceived(int fd);

}  // namespace gpuwatch::server
