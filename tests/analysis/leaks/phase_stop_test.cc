// Growth under teeth that repeat at a regular period: memory against the same
// moment a period earlier shows a stop within a stop span (leak_spans.cc,
// PhaseStopped), where the floor needs one or two new tooth bottoms.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "analysis/leaks/leak_detector.h"
#include "analysis/leaks/period_stop.h"
#include "analysis/leaks/tooth_tracker.h"
#include "detector_feed.h"

namespace gpuwatch::leaks {
namespace {

using detector_feed::Feed;
using detector_feed::Outcome;
using detector_feed::Tooth;

// A sawtooth of `period_s` whose drops each come `jitter(k)` seconds late.
double JitteredTooth(double t, double height, double period_s, double (*jitter)(int)) {
  const int k = static_cast<int>(std::floor(t / period_s));
  const double start = k * period_s + jitter(k);
  if (t < start) return height * (t - ((k - 1) * period_s + jitter(k - 1))) / period_s;
  return height * (t - start) / period_s;
}

TEST(ToothTracker, APeriodOnlyForDropsThatRepeatRegularly) {
  ToothTracker regular;
  for (int t = 0; t < 300; ++t) regular.Add(t, 10.0 * (t % 30), 50);
  const auto period = regular.period(0.05);
  ASSERT_TRUE(period);
  EXPECT_DOUBLE_EQ(period->s, 30);
  EXPECT_DOUBLE_EQ(period->jitter_s, 0);
  EXPECT_DOUBLE_EQ(period->height, 290);

  ToothTracker few;
  for (int t = 0; t < 130; ++t) few.Add(t, 10.0 * (t % 30), 50);
  EXPECT_FALSE(few.period(0.05)) << "four drops are three intervals";

  // Teeth of 20, 30, 40, 30, 20, 30 ... s: the same median, not regular.
  ToothTracker irregular;
  double t = 0;
  for (int k = 0; k < 12; ++k) {
    const double length = 30 + 10 * ((k % 4 == 0) ? -1 : (k % 4 == 2) ? 1 : 0);
    for (double s = 0; s < length; s += 1, t += 1) irregular.Add(t, 300 * s / length, 50);
  }
  EXPECT_FALSE(irregular.period(0.05));
  EXPECT_TRUE(irregular.period(0.5));
}

// The samples of `used` at 1 Hz from `from_s` to `to_s`.
std::vector<Point> Sampled(double from_s, double to_s, double (*used)(double)) {
  std::vector<Point> out;
  for (double t = from_s; t <= to_s; t += 1) out.push_back({t, used(t)});
  return out;
}

// 1 GiB/min until 1200 s under 5 GiB teeth of 89 s, then flat.
double WarmUp(double t) {
  return 10 * kGiB + kGiB * std::min(t, 1200.0) / 60 + Tooth(t, 5 * kGiB, 89);
}

TEST(StoppedAgainstAPeriodEarlier, SeesAStopWithinAStopSpanAndNotBefore) {
  const ToothTracker::Period period{89, 1, 5 * kGiB};
  const double rate = kGiB / 60;
  EXPECT_FALSE(StoppedAgainstAPeriodEarlier(Sampled(900, 1195, WarmUp), period, rate));
  EXPECT_TRUE(StoppedAgainstAPeriodEarlier(Sampled(900, 1240, WarmUp), period, rate));
  // A period later D is flat at zero: still stopped.
  EXPECT_TRUE(StoppedAgainstAPeriodEarlier(Sampled(1100, 1400, WarmUp), period, rate));
  // Not a period and a stop span back: no evidence either way.
  EXPECT_FALSE(StoppedAgainstAPeriodEarlier(Sampled(1150, 1240, WarmUp), period, rate));
}

TEST(StoppedAgainstAPeriodEarlier, ATeethMismatchIsNoStopOfGrowthThatItsPeriodCouldHide) {
  // 0.1 GiB/min, no noise, under 5 GiB teeth whose every third drop comes
  // 4 s late: where a late tooth meets one on time a period earlier, D moves
  // by the tooth's edge slope × 4 s (230 MiB), more than a period's growth
  // (148 MiB). Judged at every second of an hour: never a stop.
  const ToothTracker::Period period{89, 4, 5 * kGiB};
  const double rate = 0.1 * kGiB / 60;
  const auto used = [](double t) {
    return 10 * kGiB + 0.1 * kGiB * t / 60 +
           JitteredTooth(t, 5 * kGiB, 89, [](int k) { return (k % 3 == 1) ? 4.0 : 0.0; });
  };
  std::vector<Point> samples;
  int stops = 0;
  for (double t = 0; t <= 3600; t += 1) {
    samples.push_back({t, used(t)});
    if (t > 200 && StoppedAgainstAPeriodEarlier(samples, period, rate)) ++stops;
  }
  EXPECT_EQ(stops, 0);
}

// WarmUp with 64 MiB of noise, sampled every `step_s` up to `until_s`.
Outcome NoisyWarmUp(LeakDetector& d, double until_s, double step_s, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0, 64 * kMiB);
  return Feed(
      d, until_s, [&](double t) { return WarmUp(t) + noise(rng); }, step_s);
}

TEST(LeakDetector, AWarmUpUnderLongRegularTeethClearsItsForecastWithinAMinute) {
  // 1 GiB/min for 20 min under 5 GiB teeth of 89 s (80 s floor windows:
  // their new bottoms show the stop 1.5 to 3 min later), with noise.
  LeakDetector d;
  const Outcome r = NoisyWarmUp(d, 40 * 60, 1, 3);
  detector_feed::ExpectForecastClearedWithinAMinuteOf(r, 1200);
  EXPECT_LT(r.forecast_at.value_or(1e9), 1200);
  EXPECT_FALSE(d.estimate().forecast);
}

TEST(LeakDetector, AtATenthOfASecondTheSameWarmUpClearsWithinAMinuteToo) {
  // `run` samples every 100 ms: a stop span holds 400 samples, of which the
  // check reads 64.
  LeakDetector d;
  detector_feed::ExpectForecastClearedWithinAMinuteOf(NoisyWarmUp(d, 25 * 60, 0.1, 5), 1200);
}

TEST(LeakDetector, AGrowthUnderRegularTeethThatGoesOnIsNeverTakenForAStop) {
  // The same teeth over growth that goes on, every third drop 4 s late
  // (within the tolerance) and no noise to hide the mismatch. Once the teeth
  // have a period (five drops), no forecast clears, and once the verdict
  // stands no decision takes the growth for stopped. (Before the period, the
  // first tooth's rising edge is forecast and cleared when it falls: that is
  // the floor's doing.)
  for (double rate_gib_per_min : {1.0, 0.5}) {
    LeakDetector d;
    int cleared_late = 0;
    int not_growing = 0;  // decisions after the verdict that took the growth for stopped
    for (double t = 0; t <= 90 * 60; t += 1) {
      const double teeth =
          JitteredTooth(t, 5 * kGiB, 89, [](int k) { return (k % 3 == 1) ? 4.0 : 0.0; });
      const double bytes = 10 * kGiB + rate_gib_per_min * kGiB * t / 60 + teeth;
      for (LeakChange c : d.ObserveAt(t, bytes, detector_feed::kTotal - bytes)) {
        if (c == LeakChange::kForecastCleared && t > 5 * 89) ++cleared_late;
      }
      if (d.estimate().suspected && !d.estimate().growing && std::fmod(t, 5) == 0) ++not_growing;
    }
    EXPECT_EQ(cleared_late, 0) << rate_gib_per_min << " GiB/min";
    EXPECT_EQ(not_growing, 0) << rate_gib_per_min << " GiB/min";
    EXPECT_TRUE(d.estimate().suspected) << rate_gib_per_min << " GiB/min";
  }
}

}  // namespace
}  // namespace gpuwatch::leaks
