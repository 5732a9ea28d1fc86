// Parsing the units people type: durations ("500ms", "30s", "5m", "2h", "1d")
// and sizes ("512MiB", "8GiB", "1.5TiB", "80GB", plain bytes). Errors name the
// text and what is accepted.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "gpuwatch/status.h"

namespace gpuwatch {

Result<std::chrono::milliseconds> ParseDuration(std::string_view text);
Result<std::uint64_t> ParseSize(std::string_view text);

}  // namespace gpuwatch
