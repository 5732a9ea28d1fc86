#include "gpuwatch/units.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>

#include "core/unit_names.h"

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
  // A bare number is seconds.
  const std::optional<double> ms = s.suffix.empty() ? 1e3 : units::MillisecondsPer(s.suffix);
  if (s.ok && ms) {
    const double total = s.number * *ms;
    if (total > static_cast<double>(kLongestDuration.count())) {
      return Status::InvalidArgument(
          fmt::format("\"{}\" is too long: a duration is at most 365d", text));
    }
    return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(total)));
  }
  return Status::InvalidArgument(
      fmt::format("\"{}\" is not a duration: give a number with {} (e.g. 500ms, 30s, 5m)", text,
                  units::kDurationNames));
}

Result<std::uint64_t> ParseSize(std::string_view text) {
  const Split s = SplitNumber(text);
  if (s.ok && s.suffix.empty() && s.number != 0) {
    return Status::InvalidArgument(
        fmt::format("\"{}\" has no unit: write e.g. {}GiB or {}MiB ({}B if you mean bytes)", text,
                    s.digits, s.digits, s.digits));
  }
  const std::optional<double> bytes = s.suffix.empty() ? 1 : units::BytesPer(s.suffix);
  if (s.ok && bytes) {
    const double total = std::round(s.number * *bytes);
    if (total >= 18446744073709551616.0) {  // 2^64
      return Status::InvalidArgument(
          fmt::format("\"{}\" is too large: a size is at most 16 EiB (64-bit bytes)", text));
    }
    return static_cast<std::uint64_t>(total);
  }
  return Status::InvalidArgument(
      fmt::format("\"{}\" is not a size: give a number with {}", text, units::kSizeNames));
}

}  // namespace gpuwatch
