// Feeding a LeakDetector a made-up series and noting what it said, for the
// detector's unit tests (leak_detector_test.cc, phase_stop_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <vector>

#include "analysis/leaks/leak_detector.h"

namespace gpuwatch::leaks::detector_feed {

constexpr double kTotal = 140 * kGiB;  // an H200

// What a detector said over a run, in seconds of the run.
struct Outcome {
  std::optional<double> forecast_at;
  std::optional<double> forecast_cleared_at;
  std::optional<double> suspected_at;
  std::optional<double> cleared_at;
  std::optional<double> first_time_to_full_s;  // of the first warning
  std::optional<double> verdict_rate;          // bytes/s, as the first verdict said
  // Each rate reported (forecast, verdict, update) with the span that read it.
  struct Report {
    double t_s;
    double rate;  // bytes/s
    double span_s;
    bool update;  // an update of a standing forecast or verdict
  };
  std::vector<Report> reports;
  int forecasts = 0;
  int suspicions = 0;
  int updates = 0;
  std::optional<double> first_update_at;
};

// Feeds `used(t)` every `step_s` up to `until_s`; the device holds `used(t)`
// plus `others` of 140 GiB.
inline Outcome Feed(LeakDetector& d, double until_s, const std::function<double(double)>& used,
                    double step_s = 1, double others = 0) {
  Outcome r;
  for (double t = 0; t <= until_s; t += step_s) {
    const double bytes = used(t);
    for (LeakChange c : d.ObserveAt(t, bytes, kTotal - others - bytes)) {
      const bool warning = c == LeakChange::kForecast || c == LeakChange::kSuspected;
      if (warning || c == LeakChange::kUpdated || c == LeakChange::kForecastUpdated) {
        const LeakEstimate& e = d.estimate();
        r.reports.push_back(
            {t, e.rate_bytes_per_s, static_cast<double>(e.window.count()), !warning});
      }
      if (warning && !r.first_time_to_full_s && d.estimate().time_to_full) {
        r.first_time_to_full_s = static_cast<double>(d.estimate().time_to_full->count());
      }
      switch (c) {
        case LeakChange::kForecast:
          ++r.forecasts;
          if (!r.forecast_at) r.forecast_at = t;
          break;
        case LeakChange::kForecastCleared:
          r.forecast_cleared_at = t;
          break;
        case LeakChange::kSuspected:
          ++r.suspicions;
          if (!r.suspected_at) {
            r.suspected_at = t;
            r.verdict_rate = d.estimate().rate_bytes_per_s;
          }
          break;
        case LeakChange::kCleared:
          if (!r.cleared_at) r.cleared_at = t;
          break;
        case LeakChange::kUpdated:
        case LeakChange::kForecastUpdated:
          ++r.updates;
          if (!r.first_update_at) r.first_update_at = t;
          break;
      }
    }
  }
  return r;
}

// A training step's activations: up `height` over `period_s`, then freed.
inline double Tooth(double t, double height, double period_s) {
  return height * std::fmod(t, period_s) / period_s;
}

// A forecast was raised, and cleared after the growth stopped at `stop_s`,
// within a minute of it; no verdict came.
inline void ExpectForecastClearedWithinAMinuteOf(const Outcome& r, double stop_s) {
  ASSERT_TRUE(r.forecast_at);
  ASSERT_TRUE(r.forecast_cleared_at);
  EXPECT_GT(*r.forecast_cleared_at, stop_s);
  EXPECT_LE(*r.forecast_cleared_at, stop_s + 60);
  EXPECT_FALSE(r.suspected_at);
}

}  // namespace gpuwatch::leaks::detector_feed
