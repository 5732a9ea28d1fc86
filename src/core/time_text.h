// The one way gpuwatch writes a point in time for machines: RFC 3339 in UTC
// with milliseconds, "2024-05-01T14:23:05.123Z" (JSON, JSON Lines, CSV, the
// API, webhook bodies); and the way it reads one back.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace gpuwatch {

std::string Rfc3339(std::chrono::system_clock::time_point t);
// "2026-11-30T06:13:55.355Z" (any number of fraction digits, or none) ->
// time point; nullopt when malformed or outside 1970..2199.
std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text);

}  // namespace gpuwatch
