// Numbers with units in rule files ("90%", "8GiB", "80C", "300W", "1.4GHz"),
// and the reverse: a value in a field's base unit written for people
// ("93.1%", "7.5 GiB", "85°C"). Durations are gpuwatch/units.h's, like every
// flag's; size units are core/unit_names.h's.
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

// The suffixes ParseQuantity accepts for `unit`, for error messages.
std::string_view UnitSuffixes(Unit unit);

// A value in `unit`'s base unit, for messages and logs.
std::string FormatValue(double value, Unit unit);
std::string FormatDuration(std::chrono::milliseconds d);

}  // namespace gpuwatch::rules
