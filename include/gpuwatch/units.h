// Parsing the units people type: durations ("500ms", "30s", "5m", "2h", "1d";
// a bare number is seconds) and sizes ("512MiB", "8GiB", "1.5TiB", "80GB",
// "4096B"; a bare number other than 0 is refused: is "40" bytes or GiB?).
// Numbers are plain decimals: no signs, exponents, "nan" or "inf". Errors name
// the text and what is accepted.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "gpuwatch/status.h"

namespace gpuwatch {

// The longest duration ParseDuration accepts: longer is a typo, and any
// steady_clock time plus it stays far from overflowing.
inline constexpr std::chrono::milliseconds kLongestDuration = std::chrono::hours(24 * 365);

// Binary sizes, as doubles for rates and shares.
inline constexpr double kBytesPerMiB = 1024.0 * 1024.0;
inline constexpr double kBytesPerGiB = 1024.0 * kBytesPerMiB;

Result<std::chrono::milliseconds> ParseDuration(std::string_view text);
Result<std::uint64_t> ParseSize(std::string_view text);

}  // namespace gpuwatch
