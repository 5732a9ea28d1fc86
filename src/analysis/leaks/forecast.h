// Time-to-OOM forecast and the human forms of sizes, rates and durations used
// in leak messages. Pure functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace gpuwatch::leaks {

// How long until `used_bytes` reaches `capacity_bytes` growing at
// `rate_bytes_per_s`. nullopt when the rate is not positive or an input is not
// finite; zero when already full.
std::optional<std::chrono::seconds> TimeToFull(double capacity_bytes, double used_bytes,
                                               double rate_bytes_per_s);

std::string FormatBytes(double bytes);               // "31.2 GiB", "512 MiB"
std::string FormatRate(double bytes_per_s);          // "398 MiB/min", "0.8 MiB/min"
std::string FormatDuration(std::chrono::seconds d);  // "~4 h 10 min", "~25 min", "~2 d 3 h"

}  // namespace gpuwatch::leaks
