#include "gpuwatch/event.h"

namespace gpuwatch {

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "info";
}

std::string_view EventKindName(Event::Kind k) {
  switch (k) {
    case Event::Kind::kAlertFiring:
      return "alert_firing";
    case Event::Kind::kAlertResolved:
      return "alert_resolved";
    case Event::Kind::kLeakSuspected:
      return "leak_suspected";
    case Event::Kind::kLeakCleared:
      return "leak_cleared";
    case Event::Kind::kLeakUpdated:
      return "leak_updated";
    case Event::Kind::kOomForecast:
      return "oom_forecast";
    case Event::Kind::kOomForecastCleared:
      return "oom_forecast_cleared";
    case Event::Kind::kDiagnosis:
      return "diagnosis";
    case Event::Kind::kDeviceLost:
      return "device_lost";
    case Event::Kind::kDeviceStale:
      return "device_stale";
    case Event::Kind::kDeviceBack:
      return "device_back";
    case Event::Kind::kProcessStarted:
      return "process_started";
    case Event::Kind::kProcessEnded:
      return "process_ended";
    case Event::Kind::kMark:
      return "mark";
  }
  return "alert_firing";
}

}  // namespace gpuwatch
