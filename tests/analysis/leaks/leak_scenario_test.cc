// The leak evaluation set as tests: each case of leak_cases.cc (a scenario of
// scenarios/leaks/ read through the real NvmlBackend and the fake NVML) must
// meet the targets of docs/leaks.md (Evaluation) with default options:
// a leak is warned of within its budget and its forecasts are within 25 % of
// the truth; no leak verdict on quiet work, and every forecast on quiet work
// is cleared within 60 s after the growth that raised it. Then the harness
// itself: labels against the data, scoring on hand-made traces, recordings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "leak_evaluation.h"

namespace gpuwatch::leaks::eval {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

const EvalPaths kPaths{GPUWATCH_SOURCE_DIR "/scenarios/leaks",
                       GPUWATCH_BINARY_DIR "/lib/libnvidia-ml-fake.so"};

CaseResult RunNamed(const std::string& name) {
  const LeakCase* c = FindCase(name);
  if (c == nullptr) {
    ADD_FAILURE() << "no case " << name;
    return {};
  }
  return RunCase(*c, kPaths);
}

// The events of a run, for failure messages.
std::string Events(const CaseResult& r, std::size_t at_most = 40) {
  std::string out = "events of " + r.leak_case.name + ":\n";
  std::size_t n = 0;
  for (const TimedEvent& te : r.trace.events) {
    if (n++ == at_most) return out + "...\n";
    out += std::to_string(static_cast<long long>(te.t_s)) + " s " +
           std::string(EventKindName(te.event.kind)) + ": " + te.event.message + "\n";
  }
  return out;
}

void ExpectWarnedWithinBudget(const CaseResult& r) {
  const Score& s = r.score;
  ASSERT_TRUE(s.budget_s);
  ASSERT_TRUE(s.warning) << "never warned\n" << Events(r);
  EXPECT_LE(s.warning->delay_s, *s.budget_s)
      << "warned " << s.warning->delay_s << " s after the leak started, budget " << *s.budget_s
      << " s: " << s.warning->message;
}

void ExpectForecastsWithinTolerance(const CaseResult& r) {
  const Score& s = r.score;
  ASSERT_GT(s.reports, 0) << Events(r);
  EXPECT_EQ(s.reports_without_forecast, 0) << "reports without time_to_full\n" << Events(r);
  ASSERT_TRUE(s.worst_forecast_error && s.worst);
  EXPECT_LE(*s.worst_forecast_error, kForecastTolerance)
      << "worst forecast " << s.worst->delay_s << " s after the leak started: " << s.worst->message;
}

void ExpectNoFalseVerdict(const CaseResult& r) {
  std::string verdicts;
  for (const TimedEvent& te : r.score.false_verdicts) {
    verdicts += std::to_string(te.t_s) + " s: " + te.event.message + "\n";
  }
  EXPECT_TRUE(r.score.false_verdicts.empty()) << verdicts;
}

void ExpectNoStandingForecast(const CaseResult& r) {
  std::string raised;
  for (double t : r.score.standing_forecasts) raised += std::to_string(t) + " s ";
  EXPECT_TRUE(r.score.standing_forecasts.empty())
      << "forecasts raised at " << raised << "were not cleared in time\n"
      << Events(r);
}

void ExpectLeakTargets(const CaseResult& r) {
  ASSERT_EQ(r.error, "");
  ExpectWarnedWithinBudget(r);
  ExpectForecastsWithinTolerance(r);
  ExpectNoFalseVerdict(r);
  ExpectNoStandingForecast(r);
}

void ExpectQuietTargets(const CaseResult& r) {
  ASSERT_EQ(r.error, "");
  ExpectNoFalseVerdict(r);
  ExpectNoStandingForecast(r);
}

// No forecast stands `after_s` seconds after the case's last growth episode
// ends (a known limit: slower than ExpectNoStandingForecast's 60 s).
void ExpectForecastsClearedWithin(const CaseResult& r, double after_s) {
  ASSERT_FALSE(r.leak_case.growth.empty());
  const double by_s = r.leak_case.growth.back().end_s + after_s;
  std::set<std::pair<int, std::uint32_t>> standing;
  for (const TimedEvent& te : r.trace.events) {
    if (te.t_s > by_s) break;
    const std::pair<int, std::uint32_t> who{te.event.gpu.value_or(-1),
                                            te.event.process ? te.event.process->pid : 0};
    if (te.event.kind == Event::Kind::kOomForecast) standing.insert(who);
    if (te.event.kind == Event::Kind::kOomForecastCleared) standing.erase(who);
  }
  EXPECT_TRUE(standing.empty()) << standing.size() << " forecasts stand " << after_s
                                << " s after the growth ended\n"
                                << Events(r);
}

// Leaks.

TEST(LeakScenario, UrgentLeakIsWarnedWithinBudget) {
  const CaseResult r = RunNamed("leak_urgent");
  ASSERT_TRUE(r.score.time_to_oom_s);
  // 5.6 GiB/min with ~112 GiB free: 20 min to OOM, warned within 2 min.
  EXPECT_NEAR(*r.score.time_to_oom_s, 20 * 60, 60);
  EXPECT_LE(*r.score.budget_s, 2 * 60);
  ExpectLeakTargets(r);
}

TEST(LeakScenario, LeakFillingTheGpuInTenMinutesIsWarnedWithinAMinute) {
  const CaseResult r = RunNamed("leak_fills_10min");
  ASSERT_TRUE(r.score.time_to_oom_s);
  EXPECT_NEAR(*r.score.time_to_oom_s, 10 * 60, 30);
  EXPECT_LE(*r.score.budget_s, 60);
  ExpectLeakTargets(r);
}

TEST(LeakScenario, LeakStartingRightAfterTheAllocatorFillIsWarnedWithinBudget) {
  ExpectLeakTargets(RunNamed("leak_after_warmup"));
}

TEST(LeakScenario, FiftyMiBPerMinuteLeakIsWarnedWithin45Minutes) {
  const CaseResult r = RunNamed("leak_50mib");
  ASSERT_TRUE(r.score.budget_s);
  EXPECT_EQ(*r.score.budget_s, 45 * 60);  // 10 % of ~33 h is past the ceiling
  ExpectLeakTargets(r);
}

TEST(LeakScenario, OneMiBPerMinuteLeakUnderLittleNoiseIsWarnedWithin45Minutes) {
  const CaseResult r = RunNamed("leak_1mib_quiet");
  ASSERT_TRUE(r.score.budget_s);
  EXPECT_EQ(*r.score.budget_s, 45 * 60);
  ExpectLeakTargets(r);
}

TEST(LeakScenario, PerStepLeakUnderASawtoothIsWarnedWithinBudget) {
  ExpectLeakTargets(RunNamed("leak_per_step"));
}

TEST(LeakScenario, LateLeakIsWarnedWithinBudgetAndNotBeforeItStarts) {
  const CaseResult r = RunNamed("leak_late");
  for (const TimedEvent& te : r.trace.events) {
    if (te.event.kind == Event::Kind::kLeakSuspected) {
      EXPECT_GE(te.t_s, 40 * 60) << te.event.message;
    }
  }
  ExpectLeakTargets(r);
}

TEST(LeakScenario, LeakWhoseRateRisesIsFollowedByItsForecast) {
  const CaseResult r = RunNamed("leak_rate_rising");
  ExpectLeakTargets(r);
  const Score& s = r.score;
  ASSERT_TRUE(s.change_budget_s);
  ASSERT_TRUE(s.change_report) << "no forecast within 25 % after the rate rose\n" << Events(r);
  EXPECT_LE(s.change_report->delay_s, *s.change_budget_s);
}

// Known limit (docs/leaks.md, "Limits"): +1 GiB every 15 min is warned of in
// time, but its first rate comes from one step and the warm-up before it, and
// no rate is right until several steps have passed.
TEST(LeakScenario, StepwiseLeakIsWarnedWithinBudget) {
  const CaseResult r = RunNamed("leak_stepwise");
  ASSERT_EQ(r.error, "");
  ExpectWarnedWithinBudget(r);
  ExpectNoFalseVerdict(r);
  ExpectNoStandingForecast(r);
}
TEST(LeakScenario, FastStepwiseLeakIsWarnedWithinBudget) {
  ExpectLeakTargets(RunNamed("leak_stepwise_fast"));
}
// Known limit: the rate of bursty growth is read from the floor between and
// across bursts (the first warning within a factor of two, later updates up
// to 3x off).
TEST(LeakScenario, BurstyLeakIsWarnedWithinBudget) {
  const CaseResult r = RunNamed("leak_bursty");
  ASSERT_EQ(r.error, "");
  ExpectWarnedWithinBudget(r);
  ASSERT_TRUE(r.score.warning && r.score.warning->forecast_error);
  EXPECT_LE(std::abs(*r.score.warning->forecast_error), 1.0) << r.score.warning->message;
  ExpectNoFalseVerdict(r);
  ExpectNoStandingForecast(r);
}
TEST(LeakScenario, LinearLeakIsWarnedWithinBudget) { ExpectLeakTargets(RunNamed("leak_linear")); }

TEST(LeakScenario, SparselySampledSlowLeakIsWarnedWithinItsCeiling) {
  const CaseResult r = RunNamed("leak_slow");
  ASSERT_TRUE(r.score.budget_s);
  EXPECT_EQ(*r.score.budget_s, 3 * 3600);
  ExpectLeakTargets(r);
}

TEST(LeakScenario, LeakOnOneProcessNamesItAndSparesItsQuietNeighbour) {
  const CaseResult r = RunNamed("leak_two_procs");
  ExpectLeakTargets(r);
  bool named = false;
  for (const TimedEvent& te : r.trace.events) {
    if (!te.event.process) continue;
    const bool report =
        te.event.kind == Event::Kind::kLeakSuspected || te.event.kind == Event::Kind::kOomForecast;
    named = named || (report && te.event.process->pid == 60001);
    EXPECT_FALSE(report && te.event.process->pid == 60002) << te.event.message;
  }
  EXPECT_TRUE(named) << Events(r);
}

// Known limit: under a 24 GiB empty_cache sawtooth aliased by 1 s samples the
// verdict's rate is right (-5 %), but later updates follow the floor's beat.
TEST(LeakScenario, LeakUnderAnEmptyCacheSawtoothIsWarnedWithinBudget) {
  const CaseResult r = RunNamed("leak_empty_cache");
  ASSERT_EQ(r.error, "");
  ExpectWarnedWithinBudget(r);
  ASSERT_TRUE(r.score.verdict && r.score.verdict->forecast_error);
  EXPECT_LE(std::abs(*r.score.verdict->forecast_error), kForecastTolerance)
      << r.score.verdict->message;
  ExpectNoFalseVerdict(r);
  ExpectNoStandingForecast(r);
}

TEST(LeakScenario, LeakUnderEvaluationPhasesIsWarnedWithinBudget) {
  ExpectLeakTargets(RunNamed("leak_eval_spikes"));
}

// Recorded on an H200: two real torch leaks beside a cache warm-up and an
// empty_cache sawtooth, each warned in time with an exact forecast.
TEST(LeakScenario, RecordedFastTorchLeakOnAnH200IsWarnedWithinBudget) {
  ExpectLeakTargets(RunNamed("h200_leak_fast"));
}
TEST(LeakScenario, RecordedLateTorchLeakOnAnH200IsWarnedWithinBudget) {
  ExpectLeakTargets(RunNamed("h200_leak_late"));
}

// Quiet work.

TEST(LeakScenario, LongPeriodSawtoothRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_sawtooth"));
}
TEST(LeakScenario, SubSecondSawtoothRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_sawtooth_subsecond"));
}
TEST(LeakScenario, SeveralSecondSawtoothRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_sawtooth_seconds"));
}
TEST(LeakScenario, EmptyCacheSawtoothRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_empty_cache"));
}
TEST(LeakScenario, GradientAccumulationCycleRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_grad_accumulation"));
}
TEST(LeakScenario, AllocatorWarmUpThenFlatRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_allocator_warmup"));
}
TEST(LeakScenario, CachingAllocatorFillingFastRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_caching_allocator"));
}
// Known limit: the device's series carries the neighbour's 6 GiB sawtooth,
// whose teeth need 20 s floor windows: its forecast clears 70 s after the
// fill stops, not 60 s.
TEST(LeakScenario, AllocatorFillingForFourMinutesRaisesNoVerdictAndClearsItsForecasts) {
  const CaseResult r = RunNamed("quiet_allocator_fill");
  ASSERT_EQ(r.error, "");
  ExpectNoFalseVerdict(r);
  ExpectForecastsClearedWithin(r, 90);
}
TEST(LeakScenario, TwentyGiBInAMinuteThenFlatRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_allocator_burst"));
}
TEST(LeakScenario, CacheWarmingForAMinuteRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_cache_warm_60s"));
}
// Known limit: under 5 GiB teeth of 89 s the floor needs 80 s windows, and
// their lag: the forecast clears about 4 min after the warm-up ends, not 60 s.
TEST(LeakScenario, LongSlowWarmUpRaisesNoVerdictAndItsForecastClears) {
  const CaseResult r = RunNamed("quiet_warmup_plateau");
  ASSERT_EQ(r.error, "");
  ExpectNoFalseVerdict(r);
  ExpectForecastsClearedWithin(r, 300);
  EXPECT_GT(r.score.quiet_forecasts, 0) << "1 GiB/min for 20 min is worth a forecast";
}
TEST(LeakScenario, GrowthInStepsThatStopsRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_steps_stop"));
}
TEST(LeakScenario, SecondProcessWarmingUpMidRunRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_second_process"));
}
TEST(LeakScenario, EvaluationSpikesRaiseNoVerdictAndClearTheirForecasts) {
  ExpectQuietTargets(RunNamed("quiet_eval_spikes"));
}
TEST(LeakScenario, EvaluationPhasesRaiseNoVerdictAndClearTheirForecasts) {
  ExpectQuietTargets(RunNamed("quiet_eval_phases"));
}
TEST(LeakScenario, CheckpointSpikesRaiseNoVerdictAndClearTheirForecasts) {
  ExpectQuietTargets(RunNamed("quiet_checkpoint_spikes"));
}
TEST(LeakScenario, NoiseAloneRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_noise_only"));
}

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

TEST(LeakEvaluation, LabelsMatchTheScenarios) {
  // Two window minima differ by noise and by where the shapes' phases fall.
  constexpr double kFloorSlack = 768 * kMiB;
  for (const LeakCase& c : AllCases()) {
    SCOPED_TRACE(c.name);
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
        EXPECT_NEAR(FloorIn(points, end - w, end), FloorIn(points, settled, settled + w),
                    kFloorSlack)
            << "quiet work whose floor moves after its labelled growth";
        EXPECT_LT(std::fabs(FloorSlope(points, settled, end, 300)) * 60 / kMiB, 2.0)
            << "quiet work whose floor drifts (MiB/min)";
      }
    }
  }
}

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
