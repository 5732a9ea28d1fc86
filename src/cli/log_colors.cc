#include "cli/log_colors.h"

namespace gpuwatch::cli {
namespace {

constexpr std::string_view kPlain;
constexpr std::string_view kCritical = "\033[1;31m";
constexpr std::string_view kWarning = "\033[33m";
constexpr std::string_view kGood = "\033[32m";
constexpr std::string_view kReset = "\033[0m";

std::string_view BySeverity(Severity s) {
  switch (s) {
    case Severity::kCritical:
      return kCritical;
    case Severity::kWarning:
      return kWarning;
    case Severity::kInfo:
      break;
  }
  return kPlain;
}

}  // namespace

std::string LogColors::Paint(std::string_view style, std::string line) const {
  if (!enabled_ || style.empty()) return line;
  return std::string(style) + line + std::string(kReset);
}

std::string LogColors::Event(const gpuwatch::Event& e, std::string line) const {
  using Kind = gpuwatch::Event::Kind;
  switch (e.kind) {
    case Kind::kAlertResolved:
    case Kind::kLeakCleared:
    case Kind::kOomForecastCleared:
    case Kind::kDeviceBack:
      return Paint(kGood, std::move(line));
    case Kind::kDeviceLost:
    case Kind::kDeviceStale:
      return Paint(kCritical, std::move(line));
    case Kind::kLeakSuspected:
    case Kind::kLeakUpdated:
    case Kind::kOomForecast:
      // Never plain: a leak or a forecast is trouble whatever its severity.
      return Paint(e.severity == Severity::kCritical ? kCritical : kWarning, std::move(line));
    default:
      return Paint(BySeverity(e.severity), std::move(line));
  }
}

std::string LogColors::Sample(const DeviceSample& d, std::string line) const {
  const bool down = d.health == DeviceHealth::kLost || d.health == DeviceHealth::kStale;
  return Paint(down ? kCritical : kPlain, std::move(line));
}

std::string LogColors::Logged(std::string_view line) const {
  const auto word_at = line.find("] ");
  const std::string_view rest = word_at == std::string_view::npos ? line : line.substr(word_at + 2);
  std::string_view style = kPlain;
  if (rest.starts_with("ALERT critical")) {
    style = kCritical;
  } else if (rest.starts_with("ALERT")) {
    style = kWarning;
  } else if (rest.starts_with("RESOLVED")) {
    style = kGood;
  }
  return Paint(style, std::string(line));
}

}  // namespace gpuwatch::cli
