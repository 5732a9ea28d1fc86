#include "units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <utility>

#include "core/unit_names.h"

namespace gpuwatch::fake_nvml {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "1.5 GiB" into its number and its (trimmed) unit.
std::optional<std::pair<double, std::string_view>> SplitNumberUnit(std::string_view text) {
  text = Trim(text);
  size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.' ||
          text[end] == '-' || text[end] == '+' || text[end] == 'e' || text[end] == 'E')) {
    // An 'e' only counts as an exponent when a digit follows (so "5e" is not eaten).
    if ((text[end] == 'e' || text[end] == 'E') &&
        (end + 1 >= text.size() || !std::isdigit(static_cast<unsigned char>(text[end + 1])))) {
      break;
    }
    ++end;
  }
  auto number = ParseNumber(text.substr(0, end));
  if (!number) return std::nullopt;
  return std::make_pair(*number, Trim(text.substr(end)));
}

}  // namespace

std::optional<double> ParseNumber(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return std::nullopt;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    std::uint64_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), value, 16);
    if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
    return static_cast<double>(value);
  }
  if (text.front() == '+') text.remove_prefix(1);
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<double> ParseSizeBytes(std::string_view text) {
  auto split = SplitNumberUnit(text);
  if (!split) return std::nullopt;
  auto [number, unit] = *split;
  if (unit.empty()) return number;
  const std::optional<double> bytes = units::BytesPer(unit);
  if (!bytes) return std::nullopt;
  return number * *bytes;
}

std::optional<double> ParseDurationSeconds(std::string_view text) {
  auto split = SplitNumberUnit(text);
  if (!split) return std::nullopt;
  auto [number, unit] = *split;
  if (unit.empty()) return number;
  const std::optional<double> ms = units::MillisecondsPer(unit);
  if (!ms) return std::nullopt;
  return number * *ms / 1000.0;
}

}  // namespace gpuwatch::fake_nvml
