#include "core/time_text.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cstdint>
#include <ctime>

namespace gpuwatch {
namespace {

// `count` decimal digits of `text` from `pos`, or -1.
int Digits(std::string_view text, std::size_t pos, std::size_t count) {
  if (pos + count > text.size()) return -1;
  int v = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

}  // namespace

std::string Rfc3339(std::chrono::system_clock::time_point t) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  // Floor, not truncation: a time before 1970 keeps its milliseconds positive.
  const auto secs = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  const auto frac = static_cast<int>(ms - static_cast<std::int64_t>(secs) * 1000);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z", fmt::gmtime(secs), frac);
}

std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fraction]Z
  const int year = Digits(text, 0, 4), month = Digits(text, 5, 2), day = Digits(text, 8, 2);
  const int hour = Digits(text, 11, 2), minute = Digits(text, 14, 2), second = Digits(text, 17, 2);
  if (year < 1970 || year > 2199 || month < 0 || day < 0 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || text[13] != ':' ||
      text[16] != ':') {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(year),
                                         std::chrono::month(static_cast<unsigned>(month)),
                                         std::chrono::day(static_cast<unsigned>(day))};
  if (!date.ok()) return std::nullopt;
  std::size_t pos = 19;
  std::chrono::nanoseconds fraction{0};
  if (pos < text.size() && text[pos] == '.') {
    std::int64_t scale = 100'000'000;  // nanoseconds of the first digit
    std::size_t digits = 0;
    for (++pos; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos, ++digits) {
      fraction += std::chrono::nanoseconds((text[pos] - '0') * scale);
      scale /= 10;
    }
    if (digits == 0) return std::nullopt;
  }
  if (pos + 1 != text.size() || (text[pos] != 'Z' && text[pos] != 'z')) return std::nullopt;
  const auto midnight = std::chrono::sys_days(date);
  return std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      midnight + std::chrono::hours(hour) + std::chrono::minutes(minute) +
      std::chrono::seconds(second) + fraction);
}

}  // namespace gpuwatch
