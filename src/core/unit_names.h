// The unit names every parser of sizes and durations accepts, in one place:
// the CLI's flags (gpuwatch/units.h), rule files (analysis/rules/quantity.h)
// and the fake NVML's scenarios (compiled into that library, which links
// nothing else of gpuwatch's). Names are case-sensitive. How a bare number
// reads (seconds; a size refused or in bytes) is each parser's own.
#pragma once

#include <optional>
#include <string_view>

namespace gpuwatch::units {

// Bytes per `name`: B; binary KiB, MiB, GiB, TiB (and K, M, G, T); decimal KB
// (kB), MB, GB, TB. The empty name is not a unit here.
std::optional<double> BytesPer(std::string_view name);

// Milliseconds per `name`: ms, s, m (min), h, d. The empty name is not a unit
// here.
std::optional<double> MillisecondsPer(std::string_view name);

// For messages: the names above, in the order people reach for them.
inline constexpr std::string_view kSizeNames = "B, KiB, MiB, GiB, TiB (or KB, MB, GB, TB)";
inline constexpr std::string_view kDurationNames = "ms, s, m, h or d";

}  // namespace gpuwatch::units
