// The one way gpuwatch writes a point in time for machines: RFC 3339 in UTC
// with milliseconds, "2024-05-01T14:23:05.123Z" (JSON, JSON Lines, CSV, the
// API, webhook bodies).
#pragma once

#include <chrono>
#include <string>

namespace gpuwatch {

std::string Rfc3339(std::chrono::system_clock::time_point t);

}  // namespace gpuwatch
