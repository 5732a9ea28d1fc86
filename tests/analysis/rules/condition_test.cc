#include "analysis/rules/condition.h"

#include <gtest/gtest.h>

#include "test_snapshots.h"

namespace gpuwatch::rules {
namespace {

using testing::Device;
using testing::Process;

Condition Parse(std::string_view text, RuleScope scope = RuleScope::kDevice) {
  std::size_t offset = 0;
  Result<Condition> c = ParseCondition(text, scope, &offset);
  EXPECT_TRUE(c) << text << ": " << c.error().message();
  return c ? *c : Condition{};
}

Truth Eval(const Condition& c, const DeviceSample& d, const ProcessSample* p = nullptr) {
  DerivedValues derived;
  return c.Evaluate(EvalContext{.device = &d, .process = p, .derived = &derived});
}

TEST(Condition, ComparesAFieldWithAThresholdInItsUnit) {
  Condition c = Parse("memory_used_ratio > 90%");
  EXPECT_EQ(Eval(c, Device(0, {{FieldId::kMemoryUsedRatio, 0.95}})), Truth::kTrue);
  EXPECT_EQ(Eval(c, Device(0, {{FieldId::kMemoryUsedRatio, 0.90}})), Truth::kFalse);
}

TEST(Condition, MissingValueIsUnknownNeverTrue) {
  Condition c = Parse("temperature_gpu_celsius > 80");
  EXPECT_EQ(Eval(c, Device(0, {})), Truth::kUnknown);
  EXPECT_EQ(Eval(Negate(c), Device(0, {})), Truth::kUnknown);
}

TEST(Condition, AndOrFollowThreeValuedLogic) {
  DeviceSample only_util = Device(0, {{FieldId::kUtilizationGpuRatio, 0.1}});
  EXPECT_EQ(Eval(Parse("utilization_gpu_ratio < 30% and temperature_gpu_celsius > 80"), only_util),
            Truth::kUnknown);
  EXPECT_EQ(Eval(Parse("utilization_gpu_ratio > 30% and temperature_gpu_celsius > 80"), only_util),
            Truth::kFalse);
  EXPECT_EQ(Eval(Parse("utilization_gpu_ratio < 30% or temperature_gpu_celsius > 80"), only_util),
            Truth::kTrue);
}

TEST(Condition, AndBindsTighterThanOrAndParenthesesGroup) {
  DeviceSample d = Device(0, {{FieldId::kTemperatureGpuCelsius, 50},
                              {FieldId::kPowerDrawWatts, 100},
                              {FieldId::kFanSpeedRatio, 0.9}});
  // true or (false and false) = true; (true or false) and false = false
  EXPECT_EQ(Eval(Parse("fan_speed_ratio > 0.5 or temperature_gpu_celsius > 80 and "
                       "power_draw_watts > 300W"),
                 d),
            Truth::kTrue);
  EXPECT_EQ(Eval(Parse("(fan_speed_ratio > 0.5 or temperature_gpu_celsius > 80) and "
                       "power_draw_watts > 300W"),
                 d),
            Truth::kFalse);
  EXPECT_EQ(Eval(Parse("not (temperature_gpu_celsius > 80)"), d), Truth::kTrue);
}

TEST(Condition, EveryComparisonOperator) {
  DeviceSample d = Device(0, {{FieldId::kPerformanceState, 2}});
  EXPECT_EQ(Eval(Parse("performance_state == 2"), d), Truth::kTrue);
  EXPECT_EQ(Eval(Parse("performance_state != 2"), d), Truth::kFalse);
  EXPECT_EQ(Eval(Parse("performance_state >= 2"), d), Truth::kTrue);
  EXPECT_EQ(Eval(Parse("performance_state <= 1"), d), Truth::kFalse);
  EXPECT_EQ(Eval(Parse("performance_state < 3"), d), Truth::kTrue);
}

TEST(Condition, ProcessRulesReadProcessAndDeviceFields) {
  Condition c = Parse("used_memory_bytes > 8GiB and memory_used_ratio > 50%", RuleScope::kProcess);
  DeviceSample d = Device(0, {{FieldId::kMemoryUsedRatio, 0.8}});
  ProcessSample big = Process(10, 1, 9.0 * (1ull << 30));
  ProcessSample small = Process(11, 1, 1.0 * (1ull << 30));
  EXPECT_EQ(Eval(c, d, &big), Truth::kTrue);
  EXPECT_EQ(Eval(c, d, &small), Truth::kFalse);
}

TEST(Condition, DerivedThrottleFieldsReadClockEventReasonBits) {
  Condition thermal = Parse("throttle_thermal == 1");
  Condition power = Parse("throttle_power == 1");
  DeviceSample hw_thermal = Device(0, {{FieldId::kClockEventReasons, 0x40}});
  DeviceSample power_cap = Device(0, {{FieldId::kClockEventReasons, 0x4}});
  DeviceSample idle = Device(0, {{FieldId::kClockEventReasons, 0x1}});
  EXPECT_EQ(Eval(thermal, hw_thermal), Truth::kTrue);
  EXPECT_EQ(Eval(power, hw_thermal), Truth::kFalse);
  EXPECT_EQ(Eval(power, power_cap), Truth::kTrue);
  EXPECT_EQ(Eval(thermal, idle), Truth::kFalse);
  EXPECT_EQ(Eval(thermal, Device(0, {})), Truth::kUnknown);
}

struct BadCondition {
  std::string_view text;
  std::size_t offset;
  std::string_view says;
};

class ConditionErrors : public ::testing::TestWithParam<BadCondition> {};

TEST_P(ConditionErrors, PointAtTheProblem) {
  std::size_t offset = 999;
  Result<Condition> c = ParseCondition(GetParam().text, RuleScope::kDevice, &offset);
  ASSERT_FALSE(c) << GetParam().text;
  EXPECT_EQ(offset, GetParam().offset) << c.error().message();
  EXPECT_NE(c.error().message().find(GetParam().says), std::string::npos) << c.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    Condition, ConditionErrors,
    ::testing::Values(BadCondition{"memory_used > 0.9", 0, "unknown field 'memory_used'"},
                      BadCondition{"memory_used_ratio 0.9", 18, "expected one of"},
                      BadCondition{"memory_used_ratio > ", 20, "expected a number"},
                      BadCondition{"memory_used_ratio > 90", 20, "90%"},
                      BadCondition{"temperature_gpu_celsius > 80W", 26, "unit 'W'"},
                      BadCondition{"(memory_used_ratio > 0.9", 24, "expected ')'"},
                      BadCondition{"memory_used_ratio > 0.9 also", 24, "expected 'and'"},
                      BadCondition{"used_memory_bytes > 1GiB", 0, "scope: process"},
                      BadCondition{"name > 1", 0, "is text"},
                      BadCondition{"driver_version > 1", 0, "is text"},
                      BadCondition{"", 0, "expected a field name"}));

TEST(Condition, UnknownFieldListsTheValidFieldNames) {
  std::size_t offset = 0;
  Result<Condition> c = ParseCondition("gpu_mem > 1", RuleScope::kDevice, &offset);
  ASSERT_FALSE(c);
  const std::string& m = c.error().message();
  EXPECT_NE(m.find("memory_used_ratio"), std::string::npos) << m;
  EXPECT_NE(m.find("process_count"), std::string::npos) << m;
  EXPECT_EQ(m.find("used_memory_bytes"), std::string::npos) << "process field offered: " << m;
}

TEST(Condition, ToStringRoundTrips) {
  Condition c = Parse("utilization_gpu_ratio < 30% and (process_count > 0 or throttle_power == 1)");
  EXPECT_EQ(c.ToString(),
            "utilization_gpu_ratio < 30% and (process_count > 0 or throttle_power == 1)");
  EXPECT_EQ(Parse(c.ToString()).ToString(), c.ToString());
}

}  // namespace
}  // namespace gpuwatch::rules
