// Parsing of the unit-bearing scalars of a scenario file: sizes ("80GiB",
// "512MiB", "1.5TiB", plain bytes) and durations ("30s", "5m", "2h", "250ms",
// plain seconds). Pure functions; std::nullopt when the text is not valid.
#pragma once

#include <optional>
#include <string_view>

namespace gpuwatch::fake_nvml {

// Bytes: a plain number, or one with a unit of core/unit_names.h (the names
// every size parser of gpuwatch takes).
std::optional<double> ParseSizeBytes(std::string_view text);

// Seconds: a plain number, or one with a unit of core/unit_names.h.
std::optional<double> ParseDurationSeconds(std::string_view text);

// A plain number ("42", "-1.5", "0x60"); hex only for non-negative integers.
std::optional<double> ParseNumber(std::string_view text);

}  // namespace gpuwatch::fake_nvml
