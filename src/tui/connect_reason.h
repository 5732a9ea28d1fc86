// Why a TCP connection fails, in words ("connection refused", "cannot
// resolve h: ..."): cpp-httplib says only "Connection", so the connection is
// tried again to learn which. Used by --remote and --prometheus.
#pragma once

#include <chrono>
#include <string>

namespace gpuwatch::tui {

// "" when host:port connects now.
std::string WhyNoConnection(const std::string& host, int port, std::chrono::milliseconds timeout);

// "2 s", "500 ms", "1.5 s".
std::string Duration(std::chrono::milliseconds d);

}  // namespace gpuwatch::tui
