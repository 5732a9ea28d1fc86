// The leak evaluation itself: the seed rule's baseline, the set's size and
// labels against its scenarios, the scoring rules, and recordings as cases.
// (The detector's targets per shape are leak_scenario_test.cc.)
#include "leak_evaluation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "run_named.h"

namespace gpuwatch::leaks::eval {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

TEST(LeakBaseline, SeedRuleFalselyAlarmsOnASawtoothAndMissesTheSlowLeak) {
  // The comparison the evaluation draws: the seed's 1.5 x initial rule.
  EXPECT_GT(RunNamed("quiet_sawtooth").score.baseline_false_alarms, 0);
  EXPECT_FALSE(RunNamed("leak_slow").score.baseline_delay_s);
}

// The harness.

TEST(LeakEvaluation, SetHoldsAtLeastTwelveLabelledCasesOfEachKind) {
  int leaks = 0, quiet = 0;
  std::set<std::string> names;
  for (const LeakCase& c : AllCases()) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(names.insert(c.name).second) << "two cases named " << c.name;
    EXPECT_TRUE(std::filesystem::exists(kPaths.case_dir + "/" + c.FileName()));
    EXPECT_GT(c.interval_s, 0);
    EXPECT_LE(c.interval_s, 30);
    if (c.is_leak()) {
      ++leaks;
      EXPECT_TRUE(c.leaking_pid);
      EXPECT_GT(c.true_rate_mib_per_min, 0);
      EXPECT_LT(*c.leak_start_s, c.duration_s);
      for (const RateChange& rc : c.rate_changes) EXPECT_GT(rc.at_s, *c.leak_start_s);
    } else {
      ++quiet;
      EXPECT_FALSE(c.leaking_pid);
      EXPECT_EQ(c.true_rate_mib_per_min, 0);
      EXPECT_TRUE(c.rate_changes.empty());
    }
    for (const Episode& e : c.growth) {
      EXPECT_LE(e.start_s, e.end_s);
      EXPECT_LT(e.end_s + c.cycle_s + kClearWithin_s, c.duration_s) << "growth ends too late";
    }
  }
  EXPECT_GE(leaks, 12);
  EXPECT_GE(quiet, 12);
}

// The lowest sample of `points` in [from, to].
double FloorIn(const std::vector<Point>& points, double from_s, double to_s) {
  double low = std::numeric_limits<double>::infinity();
  for (const Point& p : points) {
    if (p.t_s >= from_s && p.t_s <= to_s) low = std::min(low, p.bytes);
  }
  return low;
}

// The least-squares slope (bytes/s) of the floors (window minima) of
// `points` over consecutive windows of w_s in [from, to].
double FloorSlope(const std::vector<Point>& points, double from_s, double to_s, double w_s) {
  std::vector<std::pair<double, double>> floors;
  for (double a = from_s; a + w_s <= to_s + 1e-9; a += w_s) {
    floors.emplace_back(a + w_s / 2, FloorIn(points, a, a + w_s));
  }
  double mt = 0, mv = 0;
  for (const auto& [t, v] : floors) {
    mt += t / static_cast<double>(floors.size());
    mv += v / static_cast<double>(floors.size());
  }
  double num = 0, den = 0;
  for (const auto& [t, v] : floors) {
    num += (t - mt) * (v - mv);
    den += (t - mt) * (t - mt);
  }
  return den > 0 ? num / den : 0;
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const LeakCase& c : AllCases()) names.push_back(c.name);
  return names;
}

// One test per case: each replays a recording of up to two hours.
class LeakLabels : public testing::TestWithParam<std::string> {};

TEST_P(LeakLabels, MatchTheRecordedSeries) {
  // Two window minima differ by noise and by where the shapes' phases fall.
  constexpr double kFloorSlack = 768 * kMiB;
  const LeakCase& c = *FindCase(GetParam());
  Result<Trace> t = Replay(c, kPaths, /*detect=*/false);
  ASSERT_TRUE(t) << t.error().message();
  if (c.source == CaseSource::kScenario) {
    EXPECT_EQ(t->samples, static_cast<std::size_t>(std::floor(c.duration_s / c.interval_s)) + 1);
  }
  EXPECT_NEAR(t->duration_s, c.duration_s, c.interval_s);
  const double end = t->duration_s;
  double settled = c.cycle_s;  // after the labelled growth
  for (const Episode& e : c.growth) settled = std::max(settled, e.end_s + c.cycle_s);
  if (c.is_leak()) {
    ASSERT_TRUE(t->used.contains(SeriesKey{c.gpu, c.leaking_pid}));
    const auto& pid = t->used.at(SeriesKey{c.gpu, c.leaking_pid});
    // The floor grows at the labelled rate from the last rate change (or the
    // start) to the end, in each half of that span.
    const double from = c.rate_changes.empty() ? *c.leak_start_s : c.rate_changes.back().at_s;
    const double mid = (from + end) / 2;
    const double w = std::min(300.0, (end - from) / 8);
    EXPECT_NEAR(FloorSlope(pid, from, end, w) * 60 / kMiB, c.RateAt(end), 0.1 * c.RateAt(end));
    EXPECT_NEAR(FloorSlope(pid, from, mid, w) * 60 / kMiB, c.RateAt(end), 0.2 * c.RateAt(end));
    EXPECT_NEAR(FloorSlope(pid, mid, end, w) * 60 / kMiB, c.RateAt(end), 0.2 * c.RateAt(end));
    // ... and is flat before the leak starts, after any labelled warm-up.
    const double before = *c.leak_start_s - settled;
    if (before >= 120) {
      const double v = std::min(300.0, before / 2);
      EXPECT_NEAR(FloorIn(pid, *c.leak_start_s - v, *c.leak_start_s),
                  FloorIn(pid, settled, settled + v), kFloorSlack)
          << "grows before the labelled start";
    }
  } else {
    // Quiet: every series is as low at the end as right after its last
    // labelled growth (or 20 min before the end, when that growth recurs to
    // the end), and its floor does not drift.
    const double w = 600;
    if (settled + w > end - w) settled = end - 2 * w;
    for (const auto& [key, points] : t->used) {
      SCOPED_TRACE(key.pid ? "pid " + std::to_string(*key.pid) : "device");
      EXPECT_NEAR(FloorIn(points, end - w, end), FloorIn(points, settled, settled + w), kFloorSlack)
          << "quiet work whose floor moves after its labelled growth";
      EXPECT_LT(std::fabs(FloorSlope(points, settled, end, 300)) * 60 / kMiB, 2.0)
          << "quiet work whose floor drifts (MiB/min)";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryCase, LeakLabels, testing::ValuesIn(CaseNames()),
                         [](const testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

// A hand-made trace: device 0 (100 GiB) at 40 GiB, one 50 GiB peak at 280 s.
Trace FlatTrace() {
  Trace t;
  t.total_bytes[0] = 100 * 1024 * kMiB;
  for (int s = 0; s <= 1000; ++s) {
    const double gib = s == 280 ? 50 : 40;
    t.used[SeriesKey{0, std::nullopt}].push_back({static_cast<double>(s), gib * 1024 * kMiB});
  }
  t.samples = 1001;
  t.duration_s = 1000;
  return t;
}

TimedEvent At(double t_s, Event::Kind kind, std::optional<std::uint32_t> pid, int gpu = 0,
              std::optional<double> time_to_full_min = std::nullopt) {
  TimedEvent te;
  te.t_s = t_s;
  te.event.kind = kind;
  te.event.gpu = gpu;
  if (pid) te.event.process = ProcessKey{*pid, 0};
  if (time_to_full_min) {
    te.event.time_to_full = std::chrono::seconds(static_cast<long long>(*time_to_full_min * 60));
  }
  return te;
}

TEST(LeakEvaluation, ScoringJudgesForecastsAgainstTheGrowthThatRaisedThem) {
  const LeakCase quiet{.name = "q", .duration_s = 1000, .growth = {{100, 200}}, .cycle_s = 10};
  Trace t = FlatTrace();
  using K = Event::Kind;
  t.events = {
      At(150, K::kOomForecast, std::nullopt),  // in the episode: clear by 260
      At(150, K::kOomForecast, 7),             // same, on pid 7
      At(180, K::kOomForecast, std::nullopt),  // an update, not a new forecast
      At(259, K::kOomForecastCleared, std::nullopt),
      At(261, K::kOomForecastCleared, 7),      // 1 s late
      At(500, K::kOomForecast, std::nullopt),  // outside: clear by 500 + 10 + 60
      At(569, K::kOomForecastCleared, std::nullopt),
      At(600, K::kOomForecast, std::nullopt),
      At(700, K::kOomForecastCleared, std::nullopt),  // late
      At(900, K::kOomForecast, 8),                    // never cleared
  };
  const Score s = ScoreCase(quiet, t);
  EXPECT_EQ(s.quiet_forecasts, 5);
  EXPECT_EQ(s.standing_forecasts, (std::vector<double>{150, 600, 900}));
  EXPECT_TRUE(s.false_verdicts.empty());
  EXPECT_EQ(s.Failures(), std::vector<std::string>{"3 standing forecasts"});
}

TEST(LeakEvaluation, ScoringCountsVerdictsOffTheLeakAsFalse) {
  const LeakCase leak{.name = "l",
                      .duration_s = 1000,
                      .leaking_pid = 5,
                      .leak_start_s = 100,
                      .true_rate_mib_per_min = 1024};
  Trace t = FlatTrace();
  using K = Event::Kind;
  t.events = {
      At(50, K::kLeakSuspected, std::nullopt),      // before the leak
      At(200, K::kLeakSuspected, 6),                // a healthy pid
      At(250, K::kLeakSuspected, std::nullopt, 1),  // another GPU
      At(300, K::kLeakSuspected, 5, 0, 60),         // the leak
      At(400, K::kLeakSuspected, std::nullopt, 0, 60),
  };
  const Score s = ScoreCase(leak, t);
  ASSERT_EQ(s.false_verdicts.size(), 3u);
  EXPECT_EQ(s.false_verdicts[1].event.process->pid, 6u);
  ASSERT_TRUE(s.verdict);
  EXPECT_EQ(s.verdict->delay_s, 200);
  ASSERT_TRUE(s.warning);
  EXPECT_EQ(s.warning->kind, K::kLeakSuspected);
  EXPECT_EQ(s.reports, 2);
}

TEST(LeakEvaluation, ScoringMeasuresForecastsAgainstTheRecentDevicePeak) {
  // 1 GiB/min from t = 0 with 60 GiB free: 60 min to OOM, budget 6 min.
  const LeakCase leak{.name = "l",
                      .duration_s = 1000,
                      .leaking_pid = 5,
                      .leak_start_s = 0,
                      .true_rate_mib_per_min = 1024};
  Trace t = FlatTrace();
  using K = Event::Kind;
  t.events = {
      // 20 s after the 50 GiB peak: truth (100 - 50) GiB / 1 GiB/min = 50 min.
      At(300, K::kOomForecast, std::nullopt, 0, 60),
      // The peak is out of the last minute: truth 60 min.
      At(400, K::kLeakSuspected, 5, 0, 42), At(500, K::kLeakUpdated, 5),  // no forecast
  };
  const Score s = ScoreCase(leak, t);
  ASSERT_TRUE(s.time_to_oom_s);
  EXPECT_NEAR(*s.time_to_oom_s, 3600, 1e-6);
  EXPECT_NEAR(*s.budget_s, 360, 1e-6);
  ASSERT_TRUE(s.warning && s.warning->forecast_error);
  EXPECT_EQ(s.warning->kind, K::kOomForecast);
  EXPECT_DOUBLE_EQ(s.warning->delay_s, 300);
  EXPECT_NEAR(*s.warning->forecast_error, 0.2, 1e-9);
  ASSERT_TRUE(s.verdict && s.verdict->forecast_error);
  EXPECT_NEAR(*s.verdict->forecast_error, -0.3, 1e-9);
  EXPECT_NEAR(*s.worst_forecast_error, 0.3, 1e-9);
  EXPECT_EQ(s.reports, 3);
  EXPECT_EQ(s.reports_without_forecast, 1);
  EXPECT_TRUE(s.warned_in_budget());
  EXPECT_EQ(s.Failures(),
            (std::vector<std::string>{"forecast off by 30 %", "1 reports without forecast"}));
}

TEST(LeakEvaluation, JsonlRecordingReplaysLikeItsScenario) {
  const LeakCase* scenario = FindCase("leak_fills_10min");
  ASSERT_NE(scenario, nullptr);
  const auto dir = std::filesystem::path(testing::TempDir()) / "leak_eval_recording";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteRecording(*scenario, kPaths, (dir / "leak_fills_10min.jsonl").string()).ok());

  LeakCase recorded = *scenario;
  recorded.source = CaseSource::kRecording;
  const CaseResult a = RunCase(*scenario, kPaths);
  const CaseResult b = RunCase(recorded, EvalPaths{dir.string(), ""});
  std::filesystem::remove_all(dir);
  ASSERT_EQ(a.error, "");
  ASSERT_EQ(b.error, "");

  EXPECT_EQ(b.trace.samples, a.trace.samples);
  EXPECT_DOUBLE_EQ(b.trace.duration_s, a.trace.duration_s);
  EXPECT_EQ(b.trace.total_bytes, a.trace.total_bytes);
  ASSERT_EQ(b.trace.used.size(), a.trace.used.size());
  for (const auto& [key, points] : a.trace.used) {
    ASSERT_TRUE(b.trace.used.contains(key));
    const auto& other = b.trace.used.at(key);
    ASSERT_EQ(other.size(), points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
      EXPECT_NEAR(other[i].t_s, points[i].t_s, 1e-3);
      EXPECT_EQ(other[i].bytes, points[i].bytes);
    }
  }
  ASSERT_EQ(b.trace.events.size(), a.trace.events.size());
  for (std::size_t i = 0; i < a.trace.events.size(); ++i) {
    const Event& x = a.trace.events[i].event;
    const Event& y = b.trace.events[i].event;
    EXPECT_NEAR(b.trace.events[i].t_s, a.trace.events[i].t_s, 1e-3);
    EXPECT_EQ(y.kind, x.kind);
    EXPECT_EQ(y.gpu, x.gpu);
    EXPECT_EQ(y.process, x.process);
    EXPECT_EQ(y.time_to_full, x.time_to_full);
  }
  EXPECT_EQ(b.score.Failures(), a.score.Failures());
  EXPECT_EQ(b.score.baseline_delay_s, a.score.baseline_delay_s);
  ASSERT_EQ(b.score.time_to_oom_s.has_value(), a.score.time_to_oom_s.has_value());
  EXPECT_DOUBLE_EQ(*b.score.time_to_oom_s, *a.score.time_to_oom_s);
}

TEST(LeakEvaluation, MissingRecordingIsAnError) {
  LeakCase c{.name = "no_such_recording", .source = CaseSource::kRecording};
  const CaseResult r = RunCase(c, EvalPaths{kPaths.case_dir, ""});
  EXPECT_NE(r.error.find("no_such_recording.jsonl"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace gpuwatch::leaks::eval
