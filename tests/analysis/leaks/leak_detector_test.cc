#include "analysis/leaks/leak_detector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>

namespace gpuwatch::leaks {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using Clock = std::chrono::system_clock;

constexpr double kGiB = 1024.0 * kMiB;

// Training memory: floor(t) under a 4 GiB sawtooth with a 83 s period (or `period`).
double Train(double t, double floor, double period = 83.0) {
  return floor + 4 * kGiB * std::fmod(t, period) / period;
}

struct Outcome {
  std::optional<double> suspected_at;  // seconds
  std::optional<double> cleared_at;
  int suspicions = 0;
};

Outcome Feed(LeakDetector& d, double until_s, const std::function<double(double)>& floor,
             double step_s = 10, double period = 83.0) {
  Outcome r;
  const Clock::time_point origin{};
  for (double t = 0; t <= until_s; t += step_s) {
    const auto now =
        origin + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(t));
    switch (d.Observe(now, Train(t, floor(t), period))) {
      case LeakChange::kSuspected:
        ++r.suspicions;
        if (!r.suspected_at) r.suspected_at = t;
        break;
      case LeakChange::kCleared:
        if (!r.cleared_at) r.cleared_at = t;
        break;
      case LeakChange::kNone:
        break;
    }
  }
  return r;
}

double Linear(double t, double mib_per_min) { return 20 * kGiB + mib_per_min * kMiB * t / 60; }

TEST(LeakDetector, DetectsALinearFloorGrowthUnderASawtooth) {
  LeakDetector d;
  Outcome r = Feed(d, 3 * 3600, [](double t) { return Linear(t, 50); });
  ASSERT_TRUE(r.suspected_at);
  EXPECT_TRUE(d.estimate().suspected);
  EXPECT_NEAR(d.estimate().rate_mib_per_min(), 50, 5);
  EXPECT_GT(d.estimate().confidence, 0.999);
  EXPECT_LE(d.estimate().rate_low_bytes_per_s, d.estimate().rate_bytes_per_s);
}

TEST(LeakDetector, WaitsForGraceAndMinimumSpanBeforeDeciding) {
  LeakDetector d;  // grace 5 min, min_span 40 min
  Outcome r = Feed(d, 3 * 3600, [](double t) { return Linear(t, 500); });
  ASSERT_TRUE(r.suspected_at);
  EXPECT_GE(*r.suspected_at, 45 * 60);
  EXPECT_LE(*r.suspected_at, 46 * 60);
}

TEST(LeakDetector, IgnoresGrowthInsideTheWarmUpGrace) {
  LeakDetector d;
  // +30 GiB in the first 4 minutes, then flat for hours.
  Outcome r =
      Feed(d, 4 * 3600, [](double t) { return 10 * kGiB + std::min(t, 240.0) / 240 * 30 * kGiB; });
  EXPECT_FALSE(r.suspected_at);
}

TEST(LeakDetector, StaysQuietBelowTheMinimumRate) {
  LeakDetector d;  // min rate 0.5 MiB/min; a clean 0.2 MiB/min is significant but too slow
  Outcome r = Feed(d, 6 * 3600, [](double t) { return Linear(t, 0.2); });
  EXPECT_FALSE(r.suspected_at);
  EXPECT_LT(d.estimate().rate_mib_per_min(), 0.5);
}

TEST(LeakDetector, StaysQuietOnAPlainSawtooth) {
  LeakDetector d;
  Outcome r = Feed(d, 8 * 3600, [](double) { return 30 * kGiB; });
  EXPECT_FALSE(r.suspected_at);
  EXPECT_TRUE(d.estimate().enough_evidence);
}

TEST(LeakDetector, StaysQuietWhenGrowthStopsEarly) {
  LeakDetector d;  // 4 GiB more at 10, 15, 20 min, then flat
  Outcome r = Feed(d, 5 * 3600, [](double t) {
    return 20 * kGiB + 4 * kGiB * ((t >= 600) + (t >= 900) + (t >= 1200));
  });
  EXPECT_FALSE(r.suspected_at);
}

TEST(LeakDetector, ClearsOnlyAfterTheFloorHasBeenFlatForClearAfter) {
  LeakDetector d;  // 50 MiB/min for 2 h, then flat
  Outcome r = Feed(d, 8 * 3600, [](double t) { return Linear(std::min(t, 7200.0), 50); });
  ASSERT_TRUE(r.suspected_at);
  ASSERT_TRUE(r.cleared_at);
  // The hour of flat floor windows may start in the window the leak stopped in.
  EXPECT_GE(*r.cleared_at, 7200 + 3600 - 300);
  EXPECT_FALSE(d.estimate().suspected);
  EXPECT_EQ(r.suspicions, 1);
}

TEST(LeakDetector, StaysSuspectedThroughAShortPause) {
  LeakDetector d;  // leaks, pauses 20 min (shorter than clear_after), leaks on
  Outcome r = Feed(d, 4 * 3600, [](double t) {
    const double leaking_s = t < 5400 ? t : t < 6600 ? 5400 : t - 1200;
    return Linear(leaking_s, 50);
  });
  ASSERT_TRUE(r.suspected_at);
  EXPECT_FALSE(r.cleared_at);
  EXPECT_EQ(r.suspicions, 1);
}

TEST(LeakDetector, KeepsABoundedHistoryForDays) {
  LeakOptions o;
  o.history_points = 64;
  LeakDetector d(o);
  Feed(
      d, 3 * 86400, [](double t) { return Linear(t, 5); }, 30);
  EXPECT_LE(d.history_size(), 65u);
  EXPECT_TRUE(d.estimate().suspected);
}

TEST(LeakDetector, MinimumRateIsConfigurable) {
  LeakOptions o;
  o.min_rate_bytes_per_s = 100 * kMiB / 60;
  LeakDetector d(o);
  Outcome r = Feed(d, 3 * 3600, [](double t) { return Linear(t, 50); });
  EXPECT_FALSE(r.suspected_at);
}

// --leak-window: every window scales with the floor window, so a short job
// with fast steps gets a verdict in minutes, and the quiet cases stay quiet.
TEST(LeakDetector, ScaledWindowsDecideAShortJobInMinutes) {
  const LeakOptions o = ScaledLeakOptions(seconds(10));
  EXPECT_EQ(o.grace, seconds(10));
  EXPECT_EQ(o.min_span, seconds(80));
  EXPECT_EQ(o.max_lookback, seconds(640));
  EXPECT_EQ(o.clear_after, seconds(120));
  EXPECT_EQ(o.min_rate_bytes_per_s, LeakOptions{}.min_rate_bytes_per_s);
  // 4 GiB/min under a 1.5 s sawtooth sampled every 200 ms (a torch loop under `run`).
  LeakDetector leak(o);
  Outcome r = Feed(
      leak, 300, [](double t) { return 20 * kGiB + 4 * kGiB * t / 60; }, 0.2, 1.5);
  ASSERT_TRUE(r.suspected_at);
  EXPECT_GE(*r.suspected_at, 90.0);  // grace + the shortest window
  EXPECT_LE(*r.suspected_at, 120.0);
  EXPECT_NEAR(leak.estimate().rate_mib_per_min(), 4096, 300);

  LeakDetector flat(o);  // the same loop without the leak
  EXPECT_FALSE(Feed(
                   flat, 600, [](double) { return 20 * kGiB; }, 0.2, 1.5)
                   .suspected_at);
  LeakDetector warmup(o);  // the allocator fills for 40 s, then flat
  EXPECT_FALSE(Feed(
                   warmup, 600, [](double t) { return 10 * kGiB + std::min(t, 40.0) * 0.5 * kGiB; },
                   0.2, 1.5)
                   .suspected_at);
}

}  // namespace
}  // namespace gpuwatch::leaks
