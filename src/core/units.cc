#include "gpuwatch/units.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace gpuwatch {
namespace {

struct Split {
  double number = 0;
  std::string_view digits;  // the number as written
  std::string_view suffix;
  bool ok = false;
};

// "1.5GiB" -> {1.5, "GiB"}; spaces between number and unit are allowed.
Split SplitNumber(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  Split s;
  if (i == 0) return s;
  const std::string digits(text.substr(0, i));
  char* end = nullptr;
  s.number = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(s.number)) return s;
  s.digits = text.substr(0, i);
  std::string_view rest = text.substr(i);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  s.suffix = rest;
  s.ok = true;
  return s;
}

}  // namespace

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  const Split s = SplitNumber(text);
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"ms", 1}, {"s", 1e3}, {"", 1e3}, {"m", 60e3}, {"min", 60e3}, {"h", 3600e3}, {"d", 86400e3}};
  if (s.ok) {
    for (const auto& [unit, ms] : kUnits) {
      if (s.suffix == unit) {
        const double total = s.number * ms;
        if (total > static_cast<double>(kLongestDuration.count())) {
          return Status::InvalidArgument(
              fmt::format("\"{}\" is too long: a duration is at most 365d", text));
        }
        return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(total)));
      }
    }
  }
  return Status::InvalidArgument(fmt::format(
      "\"{}\" is not a duration: give a number with ms, s, m, h or d (e.g. 500ms, 30s, 5m)", text));
}

Result<std::uint64_t> ParseSize(std::string_view text) {
  const Split s = SplitNumber(text);
  if (s.ok && s.suffix.empty() && s.number != 0) {
    return Status::InvalidArgument(
        fmt::format("\"{}\" has no unit: write e.g. {}GiB or {}MiB ({}B if you mean bytes)", text,
                    s.digits, s.digits, s.digits));
  }
  static constexpr std::pair<std::string_view, double> kUnits[] = {{"", 1},
                                                                   {"B", 1},
                                                                   {"KiB", 1024.0},
                                                                   {"MiB", 1048576.0},
                                                                   {"GiB", 1073741824.0},
                                                                   {"TiB", 1099511627776.0},
                                                                   {"KB", 1e3},
                                                                   {"MB", 1e6},
                                                                   {"GB", 1e9},
                                                                   {"TB", 1e12},
                                                                   {"K", 1024.0},
                                                                   {"M", 1048576.0},
                                                                   {"G", 1073741824.0},
                                                                   {"T", 1099511627776.0}};
  if (s.ok) {
    for (const auto& [unit, bytes] : kUnits) {
      if (s.suffix == unit) {
        const double total = std::round(s.number * bytes);
        if (total >= 18446744073709551616.0) {  // 2^64
          return Status::InvalidArgument(
              fmt::format("\"{}\" is too large: a size is at most 16 EiB (64-bit bytes)", text));
        }
        return static_cast<std::uint64_t>(total);
      }
    }
  }
  return Status::InvalidArgument(fmt::format(
      "\"{}\" is not a size: give a number with B, KiB, MiB, GiB or TiB (or KB, MB, GB, TB)",
      text));
}

}  // namespace gpuwatch
