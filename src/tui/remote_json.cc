#include "tui/remote_json.h"

#include <cmath>

namespace gpuwatch::tui {
namespace {

using nlohmann::json;

// Seconds from 1970 to 2200: what the API writes; far beyond is not a time.
constexpr double kLatestSeconds = 7258118400.0;  // 2200-01-01

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

std::optional<TimePoint> ParseRfc3339(std::string_view text) {
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

std::optional<TimePoint> FromUnixSeconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds > kLatestSeconds) return std::nullopt;
  // Whole seconds and the fraction apart: a double near 1.8e9 s holds about
  // a quarter of a microsecond, so the microsecond it was made from comes back.
  const double whole = std::floor(seconds);
  const auto micros = std::llround((seconds - whole) * 1e6);
  return TimePoint(std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::seconds(static_cast<std::int64_t>(whole)) + std::chrono::microseconds(micros)));
}

std::optional<TimePoint> UnixTime(JsonMembers& m, const json& object, std::string_view at,
                                  std::string_view key) {
  const json* v = JsonMembers::Find(object, key);
  if (v == nullptr) return std::nullopt;
  const auto t = v->is_number() ? FromUnixSeconds(v->get<double>()) : std::nullopt;
  if (!t) m.Wrong(JsonMembers::Path(at, key), "a time in Unix seconds (1970 to 2200)", *v);
  return t;
}

std::optional<TimePoint> IsoTime(JsonMembers& m, const json& object, std::string_view at,
                                 std::string_view key) {
  const json* v = JsonMembers::Find(object, key);
  if (v == nullptr) return std::nullopt;
  const auto t = v->is_string() ? ParseRfc3339(v->get_ref<const std::string&>()) : std::nullopt;
  if (!t) m.Wrong(JsonMembers::Path(at, key), "an RFC 3339 time (2026-11-30T10:03:38.287Z)", *v);
  return t;
}

}  // namespace gpuwatch::tui
