// The leak evaluation set as tests: each case of leak_cases.cc (a scenario of
// scenarios/leaks/ read through the real NvmlBackend and the fake NVML) must
// meet the targets of docs/leaks.md (Evaluation) with default options:
// a leak is warned of within its budget and its forecasts are within 25 % of
// the truth; no leak verdict on quiet work, and every forecast on quiet work
// is cleared within 60 s after the growth that raised it. The harness itself
// is tested in leak_evaluation_test.cc.
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
#include "run_named.h"

namespace gpuwatch::leaks::eval {
namespace {

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

// +1 GiB every 15 min: the verdict waits for several steps (one step's rate
// is no rate), and still comes within budget.
TEST(LeakScenario, StepwiseLeakIsWarnedWithinBudgetAtTheStaircasesRate) {
  ExpectLeakTargets(RunNamed("leak_stepwise"));
}
TEST(LeakScenario, FastStepwiseLeakIsWarnedWithinBudget) {
  ExpectLeakTargets(RunNamed("leak_stepwise_fast"));
}
// Known limit: the rate of bursty growth is read from the floor between and
// across bursts (the first warning within a factor of two, later updates up
// to about 2x off: a calm lowers the rate only over twice the span that read
// it, LeakDetector.ACalmBetweenBurstsLowersTheRateOnlyOnTwiceTheSpanThatReadIt).
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

// Under a 24 GiB empty_cache sawtooth aliased by 1 s samples the floor beats
// slowly: a span about as long reads half the rate a while after the verdict;
// it may not replace the verdict's rate (slower_span_ratio).
TEST(LeakScenario, LeakUnderAnEmptyCacheSawtoothIsWarnedWithinBudget) {
  ExpectLeakTargets(RunNamed("leak_empty_cache"));
}

TEST(LeakScenario, LeakUnderEvaluationPhasesIsWarnedWithinBudget) {
  ExpectLeakTargets(RunNamed("leak_eval_spikes"));
}

// A tooth as long as an evaluation phase (150 s) rules the fine floor windows
// out while it counts; the leak that follows within minutes must still be
// seen on them (a rule that kept such teeth for 8 of their lengths missed it).
TEST(LeakScenario, UrgentLeakRightAfterAnEvaluationPhaseIsWarnedWithinBudget) {
  ExpectLeakTargets(RunNamed("leak_after_eval"));
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
// Each micro-batch's wobble dips just before the cycle falls: the cycle's
// fall must count as a 75 s tooth, or the wobble's 2 s teeth hide it and each
// rising edge (14 GiB/min) is forecast as growth, every 25 minutes or so.
TEST(LeakScenario, GradientAccumulationCycleRaisesNoVerdictAndClearsItsForecasts) {
  const CaseResult r = RunNamed("quiet_grad_accumulation");
  ExpectQuietTargets(r);
  EXPECT_LE(r.score.quiet_forecasts, 2)
      << "only the first rising edge (device and process), before any tooth is seen\n"
      << Events(r);
}
TEST(LeakScenario, AllocatorWarmUpThenFlatRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_allocator_warmup"));
}
TEST(LeakScenario, CachingAllocatorFillingFastRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_caching_allocator"));
}
// The device's series carries the neighbour's 6 GiB sawtooth, whose beat
// with the filler's teeth needs 20 s floor windows: the stop is seen when the
// first flat pair of them closes and taken at once (a 20 s window already
// judged a whole window; re-deciding on the same points confirms nothing).
TEST(LeakScenario, AllocatorFillingForFourMinutesRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_allocator_fill"));
}
TEST(LeakScenario, TwentyGiBInAMinuteThenFlatRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_allocator_burst"));
}
TEST(LeakScenario, CacheWarmingForAMinuteRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_cache_warm_60s"));
}
// Under 5 GiB teeth of 89 s the floor needs 80 s windows and one or two new
// tooth bottoms to show the stop (about 3 min); memory against the same
// moment a period earlier shows it within the minute.
TEST(LeakScenario, LongSlowWarmUpRaisesNoVerdictAndItsForecastClearsWithinAMinute) {
  const CaseResult r = RunNamed("quiet_warmup_plateau");
  ExpectQuietTargets(r);
  EXPECT_GT(r.score.quiet_forecasts, 0) << "1 GiB/min for 20 min is worth a forecast";
}
TEST(LeakScenario, GrowthInStepsThatStopsRaisesNoVerdictAndClearsItsForecasts) {
  ExpectQuietTargets(RunNamed("quiet_steps_stop"));
}
// leak_stepwise's first 35 minutes (and its noise) with no step after: a
// warm-up and one step at the ends of a span are no leak.
TEST(LeakScenario, AWarmUpAndOneStepThatStaysRaiseNoVerdict) {
  ExpectQuietTargets(RunNamed("quiet_one_step"));
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

}  // namespace
}  // namespace gpuwatch::leaks::eval
