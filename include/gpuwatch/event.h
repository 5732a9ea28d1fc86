// Events: what analysis (rules, leak detection, diagnoses) and the sampler
// (devices lost and back, processes starting and ending) report. Values, not
// callbacks: producers return them, transports (log, files, webhooks, SSE,
// SQLite) consume them.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpuwatch/process_key.h"

namespace gpuwatch {

enum class Severity : std::uint8_t { kInfo, kWarning, kCritical };
std::string_view SeverityName(Severity s);  // "info", "warning", "critical"

struct Event {
  enum class Kind : std::uint8_t {
    kAlertFiring,
    kAlertResolved,
    kLeakSuspected,
    kLeakCleared,
    kLeakUpdated,         // a standing leak's rate or time to OOM moved by more than a quarter
    kOomForecast,         // memory grows fast enough to fill the GPU soon (raised or updated)
    kOomForecastCleared,  // that growth stopped
    kDiagnosis,           // pre-allocation, starved GPU, throttling
    kDeviceLost,
    kDeviceStale,  // a driver call on the GPU has not returned: its values are the last ones
    kDeviceBack,   // lost or stale before, answering again
    kProcessStarted,
    kProcessEnded,
    kMark,  // step / epoch / phase from a training process
  };
  std::chrono::system_clock::time_point time;
  Kind kind = Kind::kAlertFiring;
  Severity severity = Severity::kInfo;
  std::string source;  // rule name, "leak", "preallocation", ...
  std::optional<int> gpu;
  std::optional<ProcessKey> process;
  std::optional<double> value;  // the value that triggered it, in the field's base unit
  // Leak and forecast events: when the GPU is full at the growth they report.
  std::optional<std::chrono::seconds> time_to_full;
  std::string message;  // one line a person can act on
};

std::string_view EventKindName(Event::Kind k);  // "alert_firing", ...

}  // namespace gpuwatch
