#include "analysis/rules/quantity.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <utility>

#include "core/unit_names.h"

namespace gpuwatch::rules {
namespace {

struct Suffix {
  std::string_view text;
  double factor;
};

constexpr std::array kCelsiusSuffixes = {Suffix{"C", 1.0}, Suffix{"°C", 1.0}};
constexpr std::array kWattSuffixes = {Suffix{"W", 1.0}, Suffix{"kW", 1e3}, Suffix{"mW", 1e-3}};
constexpr std::array kJouleSuffixes = {Suffix{"J", 1.0}, Suffix{"kJ", 1e3}, Suffix{"MJ", 1e6},
                                       Suffix{"kWh", 3.6e6}};
constexpr std::array kHertzSuffixes = {Suffix{"Hz", 1.0}, Suffix{"kHz", 1e3}, Suffix{"MHz", 1e6},
                                       Suffix{"GHz", 1e9}};

// Splits "90%" into 90 and "%". Returns false when no number leads.
bool SplitNumber(std::string_view text, double* number, std::string_view* suffix) {
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, *number, std::chars_format::fixed);
  if (ec != std::errc() || !std::isfinite(*number)) return false;
  *suffix = text.substr(static_cast<std::size_t>(ptr - begin));
  return true;
}

template <std::size_t N>
std::optional<double> Factor(const std::array<Suffix, N>& table, std::string_view suffix) {
  for (const Suffix& s : table) {
    if (s.text == suffix) return s.factor;
  }
  return std::nullopt;
}

}  // namespace

std::string_view UnitSuffixes(Unit unit) {
  switch (unit) {
    case Unit::kRatio:
      return "a 0..1 number or a percentage such as 90%";
    case Unit::kBytes:
      return units::kSizeNames;
    case Unit::kBytesPerSecond:
      return "B/s, KiB/s, MiB/s, GiB/s, TiB/s, KB/s, MB/s, GB/s, TB/s";
    case Unit::kCelsius:
      return "C or °C";
    case Unit::kWatts:
      return "W, kW, mW";
    case Unit::kJoules:
      return "J, kJ, MJ, kWh";
    case Unit::kHertz:
      return "Hz, kHz, MHz, GHz";
    case Unit::kNone:
    case Unit::kCount:
    case Unit::kText:
      return "a plain number (no unit)";
  }
  return "a plain number (no unit)";
}

Result<double> ParseQuantity(std::string_view text, Unit unit) {
  double number = 0;
  std::string_view suffix;
  if (!SplitNumber(text, &number, &suffix)) {
    return Status::InvalidArgument(fmt::format("'{}' is not a number", text));
  }
  std::optional<double> factor;
  if (suffix.empty()) {
    if (unit == Unit::kRatio && (number < 0 || number > 1)) {
      return Status::InvalidArgument(fmt::format(
          "'{}' is out of range for a ratio (0..1): write {} or {}%", text, number / 100, number));
    }
    factor = 1.0;
  } else {
    switch (unit) {
      case Unit::kRatio:
        if (suffix == "%") factor = 0.01;
        break;
      case Unit::kBytes:
        factor = units::BytesPer(suffix);
        break;
      case Unit::kBytesPerSecond:
        if (suffix.size() > 2 && suffix.substr(suffix.size() - 2) == "/s") {
          factor = units::BytesPer(suffix.substr(0, suffix.size() - 2));
        }
        break;
      case Unit::kCelsius:
        factor = Factor(kCelsiusSuffixes, suffix);
        break;
      case Unit::kWatts:
        factor = Factor(kWattSuffixes, suffix);
        break;
      case Unit::kJoules:
        factor = Factor(kJouleSuffixes, suffix);
        break;
      case Unit::kHertz:
        factor = Factor(kHertzSuffixes, suffix);
        break;
      case Unit::kNone:
      case Unit::kCount:
      case Unit::kText:
        break;
    }
  }
  if (!factor) {
    return Status::InvalidArgument(
        fmt::format("unit '{}' does not fit here: use {}", suffix, UnitSuffixes(unit)));
  }
  const double value = number * *factor;
  // Byte counts are 64-bit: a threshold beyond them can never be reached.
  if ((unit == Unit::kBytes || unit == Unit::kBytesPerSecond) && value >= 18446744073709551616.0) {
    return Status::InvalidArgument(
        fmt::format("'{}' is too large: a size is at most 16 EiB (64-bit bytes)", text));
  }
  return value;
}

std::string FormatValue(double value, Unit unit) {
  switch (unit) {
    case Unit::kRatio:
      return fmt::format("{:.1f}%", value * 100);
    case Unit::kBytes:
    case Unit::kBytesPerSecond: {
      const char* per = unit == Unit::kBytes ? "" : "/s";
      double a = std::fabs(value);
      if (a >= 1073741824.0) return fmt::format("{:.2f} GiB{}", value / 1073741824.0, per);
      if (a >= 1048576.0) return fmt::format("{:.1f} MiB{}", value / 1048576.0, per);
      return fmt::format("{:.0f} B{}", value, per);
    }
    case Unit::kCelsius:
      return fmt::format("{:.0f}°C", value);
    case Unit::kWatts:
      return fmt::format("{:.0f} W", value);
    case Unit::kJoules:
      return fmt::format("{:.0f} J", value);
    case Unit::kHertz:
      return fmt::format("{:.0f} MHz", value / 1e6);
    case Unit::kNone:
    case Unit::kCount:
    case Unit::kText:
      return fmt::format("{:g}", value);
  }
  return fmt::format("{:g}", value);
}

std::string FormatDuration(std::chrono::milliseconds d) {
  auto ms = d.count();
  if (ms == 0) return "0s";
  if (ms % 3600000 == 0) return fmt::format("{}h", ms / 3600000);
  if (ms % 60000 == 0) return fmt::format("{}m", ms / 60000);
  if (ms % 1000 == 0) return fmt::format("{}s", ms / 1000);
  return fmt::format("{}ms", ms);
}

}  // namespace gpuwatch::rules
