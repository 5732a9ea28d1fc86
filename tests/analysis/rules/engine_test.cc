#include "analysis/rules/engine.h"

#include <gtest/gtest.h>

#include "analysis/rules/rule_parser.h"
#include "test_snapshots.h"

namespace gpuwatch::rules {
namespace {

using testing::Device;
using testing::Process;
using testing::Snap;

RuleEngine Engine(std::string_view yaml) {
  Result<RuleSet> set = ParseRules(yaml, "t.yaml");
  EXPECT_TRUE(set) << set.error().message();
  return RuleEngine(set ? std::move(*set) : RuleSet{});
}

Snapshot Mem(double t, double ratio, int gpu = 0) {
  return Snap(t, {Device(gpu, {{FieldId::kMemoryUsedRatio, ratio}})});
}

constexpr std::string_view kMemFor30s = R"(rules:
  - name: mem
    condition: memory_used_ratio > 90%
    for: 30s
    clear: memory_used_ratio < 80%
)";

TEST(RuleEngine, FiresOnlyAfterTheConditionHeldFor) {
  RuleEngine e = Engine(kMemFor30s);
  EXPECT_TRUE(e.Evaluate(Mem(0, 0.95)).empty());
  EXPECT_TRUE(e.Evaluate(Mem(20, 0.95)).empty());
  std::vector<Event> ev = e.Evaluate(Mem(30, 0.96));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, Event::Kind::kAlertFiring);
  EXPECT_EQ(ev[0].source, "mem");
  EXPECT_EQ(ev[0].gpu, 0);
  EXPECT_EQ(ev[0].time, testing::At(30));
  EXPECT_DOUBLE_EQ(ev[0].value.value(), 0.96);
  EXPECT_EQ(ev[0].message, "GPU 0: memory_used_ratio > 90% (now 96.0%)");
  EXPECT_TRUE(e.Evaluate(Mem(40, 0.97)).empty()) << "fires once";
}

TEST(RuleEngine, ConditionBreakingWhilePendingRestartsTheTimer) {
  RuleEngine e = Engine(kMemFor30s);
  e.Evaluate(Mem(0, 0.95));
  e.Evaluate(Mem(20, 0.5));
  EXPECT_TRUE(e.Evaluate(Mem(30, 0.95)).empty());
  EXPECT_TRUE(e.Evaluate(Mem(50, 0.95)).empty());
  EXPECT_EQ(e.Evaluate(Mem(60, 0.95)).size(), 1u);
}

TEST(RuleEngine, MissingValueWhilePendingRestartsTheTimer) {
  RuleEngine e = Engine(kMemFor30s);
  e.Evaluate(Mem(0, 0.95));
  e.Evaluate(Snap(10, {Device(0, {})}));
  EXPECT_TRUE(e.Evaluate(Mem(30, 0.95)).empty());
}

TEST(RuleEngine, MissingValuesNeverFireOrResolve) {
  RuleEngine e = Engine("rules:\n  - name: cold\n    condition: temperature_gpu_celsius < 20\n");
  for (int t = 0; t < 5; ++t) EXPECT_TRUE(e.Evaluate(Snap(t, {Device(0, {})})).empty());
  ASSERT_EQ(e.Evaluate(Snap(5, {Device(0, {{FieldId::kTemperatureGpuCelsius, 10}})})).size(), 1u);
  EXPECT_TRUE(e.Evaluate(Snap(6, {Device(0, {})})).empty()) << "N/A does not resolve";
  EXPECT_EQ(e.ActiveAlerts().size(), 1u);
}

TEST(RuleEngine, HysteresisResolvesOnlyWhenClearHolds) {
  RuleEngine e = Engine(kMemFor30s);
  e.Evaluate(Mem(0, 0.95));
  ASSERT_EQ(e.Evaluate(Mem(30, 0.95)).size(), 1u);
  EXPECT_TRUE(e.Evaluate(Mem(40, 0.85)).empty()) << "below the condition, above clear";
  EXPECT_EQ(e.ActiveAlerts().size(), 1u);
  std::vector<Event> ev = e.Evaluate(Mem(50, 0.75));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, Event::Kind::kAlertResolved);
  EXPECT_EQ(ev[0].message, "resolved: GPU 0: memory_used_ratio > 90% (now 75.0%)");
  EXPECT_TRUE(e.ActiveAlerts().empty());
}

TEST(RuleEngine, DefaultClearIsTheNegatedCondition) {
  RuleEngine e = Engine("rules:\n  - name: mem\n    condition: memory_used_ratio > 90%\n");
  ASSERT_EQ(e.Evaluate(Mem(0, 0.95)).size(), 1u);
  std::vector<Event> ev = e.Evaluate(Mem(1, 0.90));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, Event::Kind::kAlertResolved);
}

TEST(RuleEngine, ClearForNeedsTheClearConditionToHoldThatLong) {
  RuleEngine e =
      Engine("rules:\n  - name: mem\n    condition: memory_used_ratio > 90%\n    clear_for: 1m\n");
  ASSERT_EQ(e.Evaluate(Mem(0, 0.95)).size(), 1u);
  EXPECT_TRUE(e.Evaluate(Mem(10, 0.5)).empty());
  EXPECT_TRUE(e.Evaluate(Mem(40, 0.95)).empty()) << "back above: clearing starts over";
  EXPECT_TRUE(e.Evaluate(Mem(50, 0.5)).empty());
  EXPECT_TRUE(e.Evaluate(Mem(100, 0.5)).empty());
  std::vector<Event> ev = e.Evaluate(Mem(110, 0.5));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, Event::Kind::kAlertResolved);
}

TEST(RuleEngine, KeepsStatePerGpu) {
  RuleEngine e = Engine("rules:\n  - name: mem\n    condition: memory_used_ratio > 90%\n");
  std::vector<Event> ev = e.Evaluate(Snap(0, {Device(0, {{FieldId::kMemoryUsedRatio, 0.5}}),
                                              Device(1, {{FieldId::kMemoryUsedRatio, 0.95}})}));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].gpu, 1);
  std::vector<ActiveAlert> active = e.ActiveAlerts();
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0].rule, "mem");
  EXPECT_EQ(active[0].gpu, 1);
  EXPECT_EQ(active[0].severity, Severity::kWarning);
  EXPECT_EQ(active[0].since, testing::At(0));
}

constexpr std::string_view kBigProcess = R"(rules:
  - name: big
    scope: process
    condition: used_memory_bytes > 8GiB
    message: "{user} pid {pid} ({command}) holds {value} on GPU {gpu}"
)";

constexpr double kGiB = 1024.0 * 1024 * 1024;

Snapshot WithProcesses(double t, std::vector<ProcessSample> processes) {
  DeviceSample d = Device(0, {});
  d.processes = std::move(processes);
  return Snap(t, {std::move(d)});
}

TEST(RuleEngine, ProcessRulesFirePerProcessAndNameIt) {
  RuleEngine e = Engine(kBigProcess);
  std::vector<Event> ev = e.Evaluate(
      WithProcesses(0, {Process(100, 5, 9 * kGiB, "bob", "python big.py"), Process(200, 6, kGiB)}));
  ASSERT_EQ(ev.size(), 1u);
  ASSERT_TRUE(ev[0].process.has_value());
  EXPECT_EQ(ev[0].process->pid, 100u);
  EXPECT_EQ(ev[0].process->start_ticks, 5u);
  EXPECT_EQ(ev[0].message, "bob pid 100 (python big.py) holds 9.00 GiB on GPU 0");
}

TEST(RuleEngine, ControlCharactersOfACommandAreWrittenOutInTheMessage) {
  RuleEngine e = Engine(kBigProcess);
  std::vector<Event> ev = e.Evaluate(
      WithProcesses(0, {Process(100, 5, 9 * kGiB, "bob", "python -c 'x'\n\x1b[2Jfake line")}));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].message,
            "bob pid 100 (python -c 'x'\\n\\x1b[2Jfake line) holds 9.00 GiB on GPU 0");
}

TEST(RuleEngine, EndedProcessResolvesAndIsForgotten) {
  RuleEngine e = Engine(kBigProcess);
  ASSERT_EQ(e.Evaluate(WithProcesses(0, {Process(100, 5, 9 * kGiB)})).size(), 1u);
  std::vector<Event> ev = e.Evaluate(WithProcesses(1, {}));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, Event::Kind::kAlertResolved);
  EXPECT_NE(ev[0].message.find("process ended"), std::string::npos) << ev[0].message;
  EXPECT_TRUE(e.ActiveAlerts().empty());
}

TEST(RuleEngine, ReusedPidIsANewProcess) {
  RuleEngine e = Engine(kBigProcess);
  ASSERT_EQ(e.Evaluate(WithProcesses(0, {Process(100, 5, 9 * kGiB)})).size(), 1u);
  // Same pid, new start time: the old process ended, a new one fired.
  std::vector<Event> ev = e.Evaluate(WithProcesses(1, {Process(100, 77, 9 * kGiB)}));
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, Event::Kind::kAlertFiring);
  EXPECT_EQ(ev[0].process->start_ticks, 77u);
  EXPECT_EQ(ev[1].kind, Event::Kind::kAlertResolved);
  EXPECT_EQ(ev[1].process->start_ticks, 5u);
  ASSERT_EQ(e.ActiveAlerts().size(), 1u);
  EXPECT_EQ(e.ActiveAlerts()[0].process->start_ticks, 77u);
}

TEST(RuleEngine, LostDeviceDoesNotEndItsProcessesAlerts) {
  RuleEngine e = Engine(kBigProcess);
  ASSERT_EQ(e.Evaluate(WithProcesses(0, {Process(100, 5, 9 * kGiB)})).size(), 1u);
  Snapshot lost = WithProcesses(1, {});
  lost.devices[0].health = DeviceHealth::kLost;
  EXPECT_TRUE(e.Evaluate(lost).empty());
  EXPECT_EQ(e.ActiveAlerts().size(), 1u);
}

}  // namespace
}  // namespace gpuwatch::rules
