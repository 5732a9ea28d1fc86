// How many bytes have been read from a TCP socket since it was opened (Linux
// TCP_INFO's tcpi_bytes_received, kernel 4.1+, less FIONREAD's queue): what
// bounds a request whose bytes cpp-httplib reads where we cannot see them
// (TLS included). Its own
// file: the struct with that field is <linux/tcp.h>'s, which cannot share a
// translation unit with glibc's <netinet/tcp.h> (included by httplib.h).
#pragma once

#include <cstdint>

namespace gpuwatch::server {

// Bytes received and already read from the socket (received, less what
// still waits in the kernel's queue): what the reader has taken in. 0 when
// `fd` is not a TCP socket or the kernel does not say.
std::uint64_t TcpBytesRead(int fd);

}  // namespace gpuwatch::server
