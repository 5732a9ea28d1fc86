#include "analysis/leaks/leak_detector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <random>

#include "detector_feed.h"

namespace gpuwatch::leaks {
namespace {

using detector_feed::Feed;
using detector_feed::kTotal;
using detector_feed::Outcome;
using detector_feed::Tooth;
using std::chrono::minutes;
using std::chrono::seconds;

std::optional<double> FirstWarning(const Outcome& r) {
  if (r.forecast_at && r.suspected_at) return std::min(*r.forecast_at, *r.suspected_at);
  return r.forecast_at ? r.forecast_at : r.suspected_at;
}

TEST(LeakDetector, WarnsOfAnUrgentLeakWithinTenPercentOfItsTimeToFull) {
  // 5.6 GiB/min from 11 GiB: about 23 min to full; the budget is 2.3 min.
  LeakDetector d;
  std::mt19937 rng(1);
  std::normal_distribution<double> noise(0, 16 * kMiB);
  const Outcome r = Feed(d, 15 * 60, [&](double t) {
    return 11 * kGiB + 5.6 * kGiB * t / 60 + Tooth(t, 2 * kGiB, 0.5 + 0.01 * t) + noise(rng);
  });
  ASSERT_TRUE(FirstWarning(r));
  EXPECT_LE(*FirstWarning(r), 0.1 * (129 * kGiB / (5.6 * kGiB / 60)));
  ASSERT_TRUE(r.first_time_to_full_s);
  const double truth =
      (kTotal - (11 * kGiB + 5.6 * kGiB * *FirstWarning(r) / 60 + 2 * kGiB)) / (5.6 * kGiB / 60);
  EXPECT_NEAR(*r.first_time_to_full_s, truth, 0.25 * truth);
  // The growth goes on: a verdict follows, before the GPU is full.
  ASSERT_TRUE(r.suspected_at);
  EXPECT_LE(*r.suspected_at, 15 * 60);
  EXPECT_TRUE(d.estimate().suspected);
  EXPECT_FALSE(d.estimate().forecast);
  EXPECT_NEAR(d.estimate().rate_bytes_per_s, 5.6 * kGiB / 60, 0.2 * 5.6 * kGiB / 60);
}

TEST(LeakDetector, GrowthThatFillsTheGpuInTenMinutesIsWarnedOfWithinAMinute) {
  LeakDetector d;
  const double rate = 120 * kGiB / 600;
  const Outcome r =
      Feed(d, 300, [&](double t) { return 20 * kGiB + rate * t + Tooth(t, kGiB, 3); });
  ASSERT_TRUE(r.forecast_at);
  EXPECT_LE(*r.forecast_at, 60);
  EXPECT_FALSE(r.suspected_at) << "five minutes of growth are too young for a verdict";
}

TEST(LeakDetector, ASlowLeakGetsAVerdictWithinFortyFiveMinutes) {
  LeakDetector d;
  std::mt19937 rng(2);
  std::normal_distribution<double> noise(0, 8 * kMiB);
  const Outcome r = Feed(d, 3600, [&](double t) {
    return 30 * kGiB + 50 * kMiB * t / 60 + Tooth(t, 512 * kMiB, 0.7) + noise(rng);
  });
  ASSERT_TRUE(r.suspected_at);
  EXPECT_LE(*r.suspected_at, 45 * 60);
  EXPECT_EQ(r.forecasts, 0) << "a 50 MiB/min leak is days from full: no forecast";
  EXPECT_NEAR(d.estimate().rate_mib_per_min(), 50, 10);
}

TEST(LeakDetector, AFastCacheThatFillsAndStopsGetsNoVerdictAndItsForecastClears) {
  // 4 GiB/min for three minutes, then flat for an hour.
  LeakDetector d;
  const Outcome r = Feed(d, 3600, [](double t) {
    return 8 * kGiB + 4 * kGiB * std::min(t, 180.0) / 60 + Tooth(t, kGiB, 1.3);
  });
  EXPECT_FALSE(r.suspected_at);
  if (r.forecast_at) {
    ASSERT_TRUE(r.forecast_cleared_at);
    EXPECT_LE(*r.forecast_cleared_at, 180 + 60);
  }
  EXPECT_FALSE(d.estimate().forecast);
}

TEST(LeakDetector, AForecastStandsWhileLongerTeethRuleTheFinerScalesOut) {
  // 6 GiB/min for five minutes; after two its 1 GiB teeth of 3 s give way to
  // 6 GiB ones of 19 s, which rule out every scale that has tested a span:
  // that is no evidence of a stop.
  LeakDetector d;
  const Outcome r = Feed(d, 420, [](double t) {
    const double tooth = t < 120 ? Tooth(t, kGiB, 3) : Tooth(t, 6 * kGiB, 19);
    return 12 * kGiB + 6 * kGiB * std::min(t, 300.0) / 60 + tooth;
  });
  ASSERT_TRUE(r.forecast_at);
  EXPECT_LT(*r.forecast_at, 120);
  EXPECT_EQ(r.forecasts, 1) << "raised once, never cleared while the growth went on";
  ASSERT_TRUE(r.forecast_cleared_at);
  EXPECT_GT(*r.forecast_cleared_at, 300);
}

TEST(LeakDetector, GrowthUnderLongTeethThatStopsClearsItsForecastWithinAMinute) {
  // 6 GiB/min for four minutes under 17 s teeth (20 s floor windows): two flat
  // windows after the stop are the evidence, not three.
  LeakDetector d;
  const Outcome r = Feed(d, 600, [](double t) {
    return 12 * kGiB + 6 * kGiB * std::min(t, 240.0) / 60 + Tooth(t, 3 * kGiB, 17);
  });
  detector_feed::ExpectForecastClearedWithinAMinuteOf(r, 240);
}

TEST(LeakDetector, AnEmptyCacheSawtoothIsNotGrowth) {
  // The cache grows 20 GiB over ten 0.5 s steps, then empty_cache() frees it.
  LeakDetector d;
  const Outcome r = Feed(d, 2 * 3600, [](double t) { return 40 * kGiB + Tooth(t, 20 * kGiB, 5); });
  EXPECT_EQ(r.suspicions, 0);
  EXPECT_EQ(r.forecasts, 0);
}

TEST(LeakDetector, ALongSawtoothIsNotGrowthOnceItsFirstToothFell) {
  // Gradient accumulation: 30 GiB over 60 s, then freed.
  LeakDetector d;
  const Outcome r = Feed(d, 2 * 3600, [](double t) { return 50 * kGiB + Tooth(t, 30 * kGiB, 60); });
  EXPECT_EQ(r.suspicions, 0);
  EXPECT_LE(r.forecasts, 1) << "only the first tooth, before any was seen to fall";
  EXPECT_FALSE(d.estimate().forecast);
}

TEST(LeakDetector, EvaluationPhasesThatGiveTheirMemoryBackAreNotALeak) {
  // +40 GiB for two minutes every ten minutes.
  LeakDetector d;
  const Outcome r = Feed(d, 2 * 3600, [](double t) {
    return 30 * kGiB + Tooth(t, 2 * kGiB, 0.8) + (std::fmod(t, 600) >= 480 ? 40 * kGiB : 0);
  });
  EXPECT_EQ(r.suspicions, 0);
  EXPECT_EQ(r.forecasts, 0);
}

TEST(LeakDetector, GrowthInStepsThatStopsIsNoVerdict) {
  // Four steps of 4 GiB, seven minutes apart, then flat.
  LeakDetector d;
  const Outcome r = Feed(d, 2 * 3600, [](double t) {
    return 20 * kGiB + 4 * kGiB * std::min(4.0, std::floor(t / 420)) + Tooth(t, kGiB, 1.1);
  });
  EXPECT_EQ(r.suspicions, 0);
  EXPECT_FALSE(d.estimate().forecast);
}

TEST(LeakDetector, ALongWarmUpThatStopsIsNoVerdict) {
  // 10 -> 30 GiB over 20 minutes, then flat.
  LeakDetector d;
  const Outcome r = Feed(d, 2 * 3600, [](double t) {
    return 10 * kGiB + 20 * kGiB * std::min(t, 1200.0) / 1200 + Tooth(t, 3 * kGiB, 0.9);
  });
  EXPECT_EQ(r.suspicions, 0);
  EXPECT_FALSE(d.estimate().forecast);
}

// Uniform noise in [-a, a], as the fake NVML's `noise: a`, from a seeded generator.
std::function<double(double)> UniformNoise(unsigned seed, double a) {
  auto rng = std::make_shared<std::mt19937>(seed);
  return [rng, a](double) { return std::uniform_real_distribution<double>(-a, a)(*rng); };
}

// A warm-up to 30 GiB in 4 minutes, then 4 GiB teeth of 71 s with 64 MiB of
// noise; `steps(t)` adds what comes after.
double AfterWarmUp(double t, double steps, const std::function<double(double)>& noise) {
  return 26 * kGiB + std::min(4 * kGiB, kGiB * t / 60) + Tooth(t, 4 * kGiB, 71) + steps + noise(t);
}

TEST(LeakDetector, AWarmUpAndOneStepThatStaysIsNoVerdictUnderAnyNoise) {
  // The warm-up fills the first half of a span, the step its newest quarter:
  // only the middle half shows that nothing grew between them.
  for (unsigned seed = 1; seed <= 6; ++seed) {
    LeakDetector d;
    const auto noise = UniformNoise(seed, 64 * kMiB);
    const Outcome r =
        Feed(d, 3 * 3600, [&](double t) { return AfterWarmUp(t, t >= 1800 ? kGiB : 0, noise); });
    EXPECT_EQ(r.suspicions, 0) << "seed " << seed << ": verdict at " << r.suspected_at.value_or(0);
  }
}

TEST(LeakDetector, FloorJitterAloneIsNoVerdictUnderAnyNoise) {
  // Flat under the teeth for 5 hours: many spans are tested at every window,
  // so a rise within the floor's own jitter now and then passes the tests
  // (seeds 53 and 56 gave the detector before the spread test a verdict of
  // ~2 MiB/min at 4 h; none of 60 seeds does now).
  for (unsigned seed = 50; seed <= 57; ++seed) {
    LeakDetector d;
    const auto noise = UniformNoise(seed, 64 * kMiB);
    const Outcome r = Feed(d, 5 * 3600, [&](double t) { return AfterWarmUp(t, 0, noise); });
    EXPECT_EQ(r.suspicions, 0) << "seed " << seed << ": verdict at " << r.suspected_at.value_or(0);
  }
}

TEST(LeakDetector, AStaircaseLeakGetsAVerdictWithItsRateOnceSeveralStepsAreIn) {
  // +1 GiB every 15 minutes from 30 min (68 MiB/min). Over 12 noise seeds:
  // never a verdict from one step (whose rate no estimator knows), every
  // verdict's rate within 25 % of the staircase's, and each within 45 minutes
  // of the first step (the fourth step lands at 45 min; before the
  // middle-half test 5 of these 12 seeds gave a verdict at 36 min at 16
  // MiB/min). While a verdict waited for the finest floor to rise, which it
  // does only just after a step, as its span qualified, 2 of the 12 came
  // later; now a span that qualifies on two closes in a row is enough too.
  int in_time = 0;
  for (unsigned seed = 1; seed <= 12; ++seed) {
    LeakDetector d;
    const auto noise = UniformNoise(seed, 64 * kMiB);
    const Outcome r = Feed(d, 3 * 3600, [&](double t) {
      return AfterWarmUp(t, t < 1800 ? 0 : kGiB * (1 + std::floor((t - 1800) / 900)), noise);
    });
    ASSERT_TRUE(r.suspected_at) << "seed " << seed;
    EXPECT_GT(*r.suspected_at, 1800 + 900) << "seed " << seed;
    EXPECT_NEAR(*r.verdict_rate * 60 / kMiB, 1024.0 / 15, 0.25 * 1024 / 15) << "seed " << seed;
    in_time += *r.suspected_at <= 1800 + 45 * 60 ? 1 : 0;
  }
  EXPECT_EQ(in_time, 12);
}

TEST(LeakDetector, NoiseAloneSaysNothing) {
  LeakDetector d;
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0, 256 * kMiB);
  const Outcome r = Feed(d, 2 * 3600, [&](double) { return 60 * kGiB + noise(rng); });
  EXPECT_EQ(r.suspicions + r.forecasts, 0);
}

// While nothing grows, the estimate shown is that of the coarsest scale's
// longest span (its slope computed only to be shown): its rate about zero
// within Sen's interval, over the span's floor points.
TEST(LeakDetector, AQuietSeriesShowsTheEstimateOfItsLongestSpan) {
  LeakDetector d;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> noise(-10 * kMiB, 10 * kMiB);
  Feed(d, 2 * 3600, [&](double) { return 30 * kGiB + noise(rng); });
  const LeakEstimate& e = d.estimate();
  EXPECT_FALSE(e.growing);
  EXPECT_FALSE(e.suspected || e.forecast);
  // The coarsest scale (320 s windows) has tested 8 to 18 of its points by
  // now; its longest span is what is shown.
  EXPECT_GE(e.points, 18u);
  EXPECT_GE(e.window, std::chrono::seconds(18 * 320 - 320));
  EXPECT_LE(e.rate_low_bytes_per_s, e.rate_bytes_per_s);
  EXPECT_GE(e.rate_high_bytes_per_s, e.rate_bytes_per_s);
  EXPECT_LT(std::fabs(e.rate_bytes_per_s) * 60, 1 * kMiB);  // under 1 MiB/min
  EXPECT_GT(e.confidence, 0);
  EXPECT_LT(e.confidence, 0.999);
  EXPECT_NEAR(e.floor_bytes, 30 * kGiB, 10 * kMiB);
}

TEST(LeakDetector, AForecastIsUpdatedWhenTheRateChanges) {
  // 1 GiB/min for five minutes, then 4 GiB/min: the predicted time of full moves.
  LeakDetector d;
  const Outcome r = Feed(d, 600, [](double t) {
    const double rate1 = kGiB / 60, rate2 = 4 * kGiB / 60;
    return 40 * kGiB + (t < 300 ? rate1 * t : rate1 * 300 + rate2 * (t - 300)) +
           Tooth(t, kGiB, 1.7);
  });
  ASSERT_TRUE(r.forecast_at);
  EXPECT_GE(r.updates, 1);
  EXPECT_NEAR(d.estimate().rate_bytes_per_s, 4 * kGiB / 60, 0.25 * 4 * kGiB / 60);
}

TEST(LeakDetector, AVerdictsRateFallsOnlyOnAsMuchEvidenceAsAVerdictAtTheLowerRate) {
  // 200 MiB/min for 45 minutes, then 50 MiB/min under a 1 GiB sawtooth and
  // noise. News that memory runs out later needs the span a verdict at the
  // lower rate needs (30 min: its time to full is days), not the few minutes
  // of flatter floor a burst or an aliased sawtooth also shows; it comes then.
  LeakDetector d;
  const auto noise = UniformNoise(5, 64 * kMiB);
  constexpr double kChange = 45 * 60;
  const Outcome r = Feed(d, kChange + 90 * 60, [&](double t) {
    const double fast = 200 * kMiB / 60, slow = 50 * kMiB / 60;
    return 30 * kGiB + (t < kChange ? fast * t : fast * kChange + slow * (t - kChange)) +
           Tooth(t, kGiB, 1.3) + noise(t);
  });
  ASSERT_TRUE(r.suspected_at);
  ASSERT_LT(*r.suspected_at, kChange);
  ASSERT_TRUE(r.first_update_at);
  EXPECT_GE(*r.first_update_at, kChange + 25 * 60);
  EXPECT_NEAR(d.estimate().rate_bytes_per_s, 50 * kMiB / 60, 0.25 * 50 * kMiB / 60);
}

TEST(LeakDetector, ClearsAVerdictOnlyAfterTheFloorHasBeenFlatForClearAfter) {
  LeakDetector d;
  const Outcome r = Feed(d, 3 * 3600, [](double t) {
    return 30 * kGiB + 200 * kMiB * std::min(t, 3600.0) / 60 + Tooth(t, kGiB, 1.3);
  });
  ASSERT_TRUE(r.suspected_at);
  ASSERT_TRUE(r.cleared_at);
  // Flat for clear_after, give or take the coarsest floor window's 320 s.
  EXPECT_GE(*r.cleared_at, 3600 + 3600 - 320);
  EXPECT_FALSE(d.estimate().suspected);
}

// Feeds 1 MiB/min from 12 GiB until `stop_s` under a 768 MiB sawtooth of
// 47 s and 32 MiB of noise (`seed`), sampled every 30 s up to `until_s`.
Outcome FeedSlowLeak(LeakDetector& d, unsigned seed, double stop_s, double until_s) {
  const auto noise = UniformNoise(seed, 32 * kMiB);
  return Feed(
      d, until_s,
      [&](double t) {
        return 12 * kGiB + kMiB * std::min(t, stop_s) / 60 + Tooth(t, 768 * kMiB, 47) + noise(t);
      },
      30);
}

TEST(LeakDetector, ASlowLeaksVerdictStandsThroughAnHourThatLooksFlat) {
  // 1 MiB/min under a 768 MiB sawtooth, sampled every 30 s for 6 hours: its
  // rise over an hour is within the floor's jitter, so an hour that looks
  // flat is no evidence of a stop. Clearing on such an hour took the verdict
  // back while the leak went on under 6 of these 8 seeds.
  for (unsigned seed = 1; seed <= 8; ++seed) {
    LeakDetector d;
    const Outcome r = FeedSlowLeak(d, seed, 6 * 3600, 6 * 3600);
    ASSERT_TRUE(r.suspected_at) << "seed " << seed;
    EXPECT_LE(*r.suspected_at, 3 * 3600) << "seed " << seed;
    EXPECT_FALSE(r.cleared_at) << "seed " << seed << ": cleared at " << r.cleared_at.value_or(0);
    EXPECT_TRUE(d.estimate().suspected) << "seed " << seed;
  }
}

TEST(LeakDetector, ASlowLeakThatStopsIsClearedOnceALongerFlatSpanShowsIt) {
  // The same leak stops at 3 hours: its verdict clears once a flat span,
  // doubled from clear_after while the floor stays flat that far back, bounds
  // the rate below a quarter of the one reported, within the 12 hours after.
  for (unsigned seed = 1; seed <= 4; ++seed) {
    LeakDetector d;
    const Outcome r = FeedSlowLeak(d, seed, 3 * 3600, 15 * 3600);
    ASSERT_TRUE(r.suspected_at) << "seed " << seed;
    ASSERT_TRUE(r.cleared_at) << "seed " << seed;
    EXPECT_GE(*r.cleared_at, 3 * 3600 + 3600) << "seed " << seed;
    EXPECT_FALSE(d.estimate().suspected) << "seed " << seed;
  }
}

TEST(LeakDetector, NoForecastWithoutKnowingTheFreeMemory) {
  LeakDetector d;
  int forecasts = 0;
  for (double t = 0; t <= 600; t += 1) {
    for (LeakChange c : d.ObserveAt(t, 20 * kGiB + 8 * kGiB * t / 60)) {
      forecasts += c == LeakChange::kForecast ? 1 : 0;
    }
  }
  EXPECT_EQ(forecasts, 0);
}

TEST(LeakDetector, KeepsABoundedHistoryForDays) {
  // Three days of 20 s samples under 67 s teeth: every scale merges its older
  // points many times over (the coarsest, 320 s, holds 12 h before it merges).
  LeakDetector d;
  (void)Feed(
      d, 3 * 86400, [](double t) { return 30 * kGiB + Tooth(t, kGiB, 67); }, 20);
  EXPECT_LE(d.history_size(), 7u * (d.options().history_points + 1));
}

TEST(LeakDetector, ScaledOptionsScaleEveryWindow) {
  const LeakOptions o = ScaledLeakOptions(seconds(10));
  EXPECT_EQ(o.base_window, seconds(10));
  EXPECT_EQ(o.verdict_min_span, minutes(20));
  EXPECT_EQ(o.verdict_max_span, minutes(60));
  EXPECT_EQ(o.stop_span, seconds(80));
  EXPECT_EQ(o.forecast_horizon, minutes(600));
  EXPECT_EQ(o.clear_after, minutes(120));
}

TEST(LeakDetector, ACalmBetweenBurstsLowersTheRateOnlyOnTwiceTheSpanThatReadIt) {
  // Bursts of 128-1024 MiB at random times 3-25 minutes apart for 5 hours,
  // under a 2 GiB sawtooth of 59 s. A calm reads a slower floor over a span
  // about as long as the one that averaged the bursts before it (on
  // scenarios/leaks/leak_bursty a 36-minute span read 14 MiB/min and replaced
  // 68 MiB/min read over 35 minutes; the leak's average was 45 MiB/min): news
  // that memory lasts longer needs a span at least twice as long.
  for (unsigned seed = 1; seed <= 8; ++seed) {
    std::mt19937 rng(seed);
    std::vector<std::pair<double, double>> bursts;  // when, bytes held since
    for (double at = 20 * 60, held = 0; at < 5 * 3600;
         at += std::uniform_real_distribution<double>(3, 25)(rng) * 60) {
      held += std::uniform_real_distribution<double>(128, 1024)(rng) * kMiB;
      bursts.emplace_back(at, held);
    }
    const auto noise = UniformNoise(seed, 64 * kMiB);
    LeakDetector d;
    const Outcome r = Feed(d, 5 * 3600, [&](double t) {
      double leaked = 0;
      for (const auto& [at, held] : bursts) leaked = at <= t ? held : leaked;
      return 40 * kGiB + leaked + Tooth(t, 2 * kGiB, 59) + noise(t);
    });
    ASSERT_TRUE(r.suspected_at) << "seed " << seed;
    int slower = 0;
    for (std::size_t i = 1; i < r.reports.size(); ++i) {
      const Outcome::Report& before = r.reports[i - 1];
      const Outcome::Report& now = r.reports[i];
      if (!now.update || now.rate >= before.rate) continue;
      ++slower;
      EXPECT_GE(now.span_s + 1, 2 * before.span_s)
          << "seed " << seed << ": at " << now.t_s << " s " << now.rate * 60 / kMiB
          << " MiB/min over " << now.span_s << " s replaced " << before.rate * 60 / kMiB
          << " MiB/min over " << before.span_s << " s";
    }
    EXPECT_GT(slower, 0) << "seed " << seed << ": no slower rate was ever reported";
  }
}

}  // namespace
}  // namespace gpuwatch::leaks
