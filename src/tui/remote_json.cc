#include "tui/remote_json.h"

#include <cmath>

namespace gpuwatch::tui {
namespace {

using nlohmann::json;

// Seconds from 1970 to 2200: what the API writes; far beyond is not a time.
constexpr double kLatestSeconds = 7258118400.0;  // 2200-01-01

}  // namespace

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

}  // namespace gpuwatch::tui
