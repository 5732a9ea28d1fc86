// The evaluation cases of docs/leaks.md as tests: each scenario of
// scenarios/leaks/ read through the real NvmlBackend and the fake NVML.
#include <gtest/gtest.h>

#include <string>

#include "leak_evaluation.h"

namespace gpuwatch::leaks::eval {
namespace {

CaseResult RunNamed(const std::string& name) {
  const EvalPaths paths{GPUWATCH_SOURCE_DIR "/scenarios/leaks",
                        GPUWATCH_BINARY_DIR "/lib/libnvidia-ml-fake.so"};
  for (const LeakCase& c : AllCases()) {
    if (c.name == name) return RunCase(c, paths);
  }
  ADD_FAILURE() << "no case " << name;
  return {};
}

std::string Alarms(const MethodResult& m) {
  std::string s;
  for (const Alarm& a : m.alarms) s += std::to_string(a.t_s) + " s: " + a.message + "\n";
  return s;
}

void ExpectDetected(const std::string& name) {
  const CaseResult r = RunNamed(name);
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.detector.detection_delay_s) << "no alarm on " << name;
  EXPECT_EQ(r.detector.false_alarms, 0) << Alarms(r.detector);
  ASSERT_TRUE(r.final_estimate);
  EXPECT_TRUE(r.final_estimate->suspected);
  EXPECT_NEAR(r.final_estimate->rate_mib_per_min(), r.leak_case.true_rate_mib_per_min,
              0.3 * r.leak_case.true_rate_mib_per_min);
}

void ExpectQuiet(const std::string& name) {
  const CaseResult r = RunNamed(name);
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.detector.alarms.empty()) << Alarms(r.detector);
}

TEST(LeakDetector, DetectsALinearLeak) { ExpectDetected("leak_linear"); }
TEST(LeakDetector, DetectsASlowLeakOfOneMiBPerMinute) { ExpectDetected("leak_slow"); }
TEST(LeakDetector, DetectsAStepwiseLeakWhoseStepsContinue) { ExpectDetected("leak_stepwise"); }
TEST(LeakDetector, DetectsABurstyLeak) { ExpectDetected("leak_bursty"); }

TEST(LeakDetector, StaysQuietOnWarmUpGrowthThatPlateaus) { ExpectQuiet("quiet_warmup_plateau"); }
TEST(LeakDetector, StaysQuietOnCachingAllocatorFillThenFlat) {
  ExpectQuiet("quiet_caching_allocator");
}
TEST(LeakDetector, StaysQuietOnPeriodicEvaluationSpikes) { ExpectQuiet("quiet_eval_spikes"); }
TEST(LeakDetector, StaysQuietOnAPlainSawtooth) { ExpectQuiet("quiet_sawtooth"); }
TEST(LeakDetector, StaysQuietOnStepwiseGrowthThatStops) { ExpectQuiet("quiet_steps_stop"); }

TEST(LeakBaseline, SeedRuleFalselyAlarmsOnASawtoothAndMissesTheSlowLeak) {
  // The comparison docs/leaks.md draws: the seed's 1.5 × initial rule.
  EXPECT_GT(RunNamed("quiet_sawtooth").baseline.false_alarms, 0);
  EXPECT_FALSE(RunNamed("leak_slow").baseline.detection_delay_s);
}

}  // namespace
}  // namespace gpuwatch::leaks::eval
