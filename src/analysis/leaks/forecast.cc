#include "analysis/leaks/forecast.h"

#include <fmt/format.h>

#include <cmath>

#include "gpuwatch/units.h"

namespace gpuwatch::leaks {

std::optional<std::chrono::seconds> TimeToFull(double capacity_bytes, double used_bytes,
                                               double rate_bytes_per_s) {
  if (!std::isfinite(capacity_bytes) || !std::isfinite(used_bytes) ||
      !std::isfinite(rate_bytes_per_s) || rate_bytes_per_s <= 0) {
    return std::nullopt;
  }
  const double left = capacity_bytes - used_bytes;
  if (left <= 0) return std::chrono::seconds(0);
  const double s = left / rate_bytes_per_s;
  if (s > 1e12) return std::nullopt;  // centuries: no forecast worth printing
  return std::chrono::seconds(static_cast<long long>(s));
}

std::string FormatBytes(double bytes) {
  if (bytes >= kBytesPerGiB) return fmt::format("{:.1f} GiB", bytes / kBytesPerGiB);
  return fmt::format("{:.0f} MiB", bytes / kBytesPerMiB);
}

std::string FormatRate(double bytes_per_s) {
  const double mib_per_min = bytes_per_s * 60 / kBytesPerMiB;
  if (std::fabs(mib_per_min) >= 10) return fmt::format("{:.0f} MiB/min", mib_per_min);
  return fmt::format("{:.1f} MiB/min", mib_per_min);
}

std::string FormatDuration(std::chrono::seconds d) {
  const long long s = d.count();
  const long long days = s / 86400;
  const long long hours = (s % 86400) / 3600;
  const long long minutes = (s % 3600) / 60;
  if (days > 0) return fmt::format("~{} d {} h", days, hours);
  if (hours > 0) return fmt::format("~{} h {} min", hours, minutes);
  if (minutes > 0) return fmt::format("~{} min", minutes);
  return fmt::format("~{} s", s);
}

}  // namespace gpuwatch::leaks
