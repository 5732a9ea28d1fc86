// Numbers with units in rule files ("90%", "8GiB", "80C", "300W", "1.4GHz")
// and durations ("500ms", "30s", "5m", "1h"), and the reverse: a value in a
// field's base unit written for people ("93.1%", "7.5 GiB", "85°C").
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "gpuwatch/fields.h"
#include "gpuwatch/status.h"

namespace gpuwatch::rules {

// Parses `text` (a number, optionally followed by a unit suffix with no space)
// into `unit`'s base unit. A ratio accepts "90%" or a plain 0..1 number; the
// other units accept a plain number in the base unit or a suffix that fits.
Result<double> ParseQuantity(std::string_view text, Unit unit);

// "250ms", "30s", "5m", "2h"; a bare "0" is zero. Negative is an error.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// The suffixes ParseQuantity accepts for `unit`, for error messages.
std::string_view UnitSuffixes(Unit unit);

// A value in `unit`'s base unit, for messages and logs.
std::string FormatValue(double value, Unit unit);
std::string FormatDuration(std::chrono::milliseconds d);

}  // namespace gpuwatch::rules
