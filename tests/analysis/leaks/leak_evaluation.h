// Runs and scores the leak evaluation cases (leak_cases.h).
//
// Replay: the case's samples, in order, go to a LeakTracker with default
// options and to the seed's baseline rule ("used > 1.5 x initial -> leak",
// initial = the first sample of each device and process). A scenario is read
// through the real NvmlBackend and the fake NVML library at frozen scenario
// times (GPUWATCH_FAKE_TIME, every interval_s); a recording through
// ReplayBackend, one sample per read (no sampler thread).
//
// Score: against the case's label (docs/leaks.md, Evaluation):
//  - a *true report* is a leak event (kOomForecast, kLeakSuspected,
//    kLeakUpdated) on the leaking pid or on its GPU's device series, at or
//    after the leak starts; the *warning* is the first true kOomForecast or
//    kLeakSuspected, the *verdict* the first true kLeakSuspected;
//  - time to OOM at the leak start = (device total - device used then) / true
//    rate, "used then" the highest device sample within 60 s of the start less
//    the leak's own growth since the start; budget = min(10 % of it, the
//    case's ceiling, 45 min by default);
//  - forecast error = (event.time_to_full - truth) / truth, truth =
//    (device total - highest device sample of the last 60 s) / true rate now;
//  - any other kLeakSuspected is a false verdict;
//  - a kOomForecast on quiet work (quiet cases, healthy pids, before a leak
//    starts) must be cleared (kOomForecastCleared) within 60 s after the
//    growth that raised it ended: the labelled episode it was raised in, else
//    the steady shape's rise (cycle_s) from when it was raised; one not cleared
//    by then, or still raised at the end, is *standing*.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuwatch/event.h"
#include "gpuwatch/status.h"
#include "leak_cases.h"

namespace gpuwatch::leaks::eval {

inline constexpr double kForecastTolerance = 0.25;  // |forecast error| allowed
inline constexpr double kClearWithin_s = 60;        // a forecast's growth ended -> cleared

struct EvalPaths {
  std::string case_dir;      // .../scenarios/leaks
  std::string fake_library;  // .../lib/libnvidia-ml-fake.so (scenarios only)
};

// A memory series: the device (no pid) or a process on it.
struct SeriesKey {
  int gpu = 0;
  std::optional<std::uint32_t> pid;
  friend auto operator<=>(const SeriesKey&, const SeriesKey&) = default;
};

struct Point {
  double t_s = 0;
  double bytes = 0;
};

struct TimedEvent {
  double t_s = 0;  // seconds since the first sample
  Event event;
};

struct Alarm {  // the baseline's
  double t_s = 0;
  SeriesKey subject;
  std::string message;
};

// What one replay of a case saw.
struct Trace {
  std::map<SeriesKey, std::vector<Point>> used;  // memory used, every sample
  std::map<int, double> total_bytes;             // device memory total
  std::vector<TimedEvent> events;                // the tracker's leak and forecast events
  std::vector<Alarm> baseline;
  std::size_t samples = 0;
  double duration_s = 0;  // time of the last sample
};

// Without `detect` only the samples and the baseline are recorded (to check
// labels against the data quickly).
Result<Trace> Replay(const LeakCase& c, const EvalPaths& paths, bool detect = true);

// A warning or verdict: when, which kind, its forecast error.
struct Report {
  double delay_s = 0;  // since the leak (or the rate change) started
  Event::Kind kind = Event::Kind::kOomForecast;
  std::optional<double> forecast_error;  // nullopt: the event had no time_to_full
  std::string message;
};

struct Score {
  // Leaks.
  std::optional<double> time_to_oom_s;  // at the leak start
  std::optional<double> budget_s;
  std::optional<Report> warning;
  std::optional<Report> verdict;
  // The last rate change of a leak that speeds up: its budget, and the first
  // true report after it whose forecast is within tolerance.
  std::optional<double> change_budget_s;
  std::optional<Report> change_report;
  int reports = 0;                             // true reports judged for their forecast
  int reports_without_forecast = 0;            // ... of which carried no time_to_full
  std::optional<double> worst_forecast_error;  // largest |error| among them
  std::optional<Report> worst;                 // ... and that report
  // kOomForecastCleared / kLeakCleared on the leak while it goes on (every
  // labelled leak lasts to the end of its run): not a target, but flapping.
  int cleared_during_leak = 0;
  // Every case.
  std::vector<TimedEvent> false_verdicts;
  int quiet_forecasts = 0;                 // kOomForecasts raised on quiet work
  std::vector<double> standing_forecasts;  // when each standing one was raised
  // The baseline.
  std::optional<double> baseline_delay_s;
  int baseline_false_alarms = 0;

  bool warned_in_budget() const;
  // What misses a target, one short phrase each; empty when the case passes.
  std::vector<std::string> Failures() const;
};

Score ScoreCase(const LeakCase& c, const Trace& trace);

// The forecast a true report at t should carry: seconds until the device is
// full at the true rate (nullopt where the case does not leak at t).
std::optional<double> TrueTimeToFull(const LeakCase& c, const Trace& trace, double t_s);

struct CaseResult {
  LeakCase leak_case;
  Trace trace;
  Score score;
  std::string error;  // the case could not be replayed
};

CaseResult RunCase(const LeakCase& c, const EvalPaths& paths);

// The scenario case `c` written as a gpuwatch.jsonl/1 recording (export/lines.h
// header and sample lines, the same samples Replay reads) to `path`.
Status WriteRecording(const LeakCase& c, const EvalPaths& paths, const std::string& path);

}  // namespace gpuwatch::leaks::eval
