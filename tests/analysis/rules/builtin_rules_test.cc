#include "analysis/rules/builtin_rules.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "analysis/rules/engine.h"
#include "analysis/rules/rule_parser.h"
#include "test_snapshots.h"

namespace gpuwatch::rules {
namespace {

using testing::Device;
using testing::Process;
using testing::Snap;

// The events of one built-in rule over a sequence of snapshots.
std::vector<Event> EventsOf(std::string_view rule, const std::vector<Snapshot>& snapshots) {
  RuleSet all = BuiltinRules();
  RuleSet one;
  for (Rule& r : all.rules) {
    if (r.name == rule) one.rules.push_back(std::move(r));
  }
  EXPECT_EQ(one.rules.size(), 1u) << rule;
  RuleEngine engine(std::move(one));
  std::vector<Event> out;
  for (const Snapshot& s : snapshots) {
    for (Event& e : engine.Evaluate(s)) out.push_back(std::move(e));
  }
  return out;
}

std::vector<Snapshot> Series(std::initializer_list<std::pair<double, DeviceSample>> points) {
  std::vector<Snapshot> out;
  for (const auto& [t, d] : points) out.push_back(Snap(t, {d}));
  return out;
}

TEST(BuiltinRules, ParseAndHaveTheDocumentedNames) {
  RuleSet set = BuiltinRules();
  std::vector<std::string> names;
  for (const Rule& r : set.rules) names.push_back(r.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"gpu_memory_high", "gpu_temperature_high", "gpu_starved",
                                      "gpu_ecc_uncorrected", "gpu_xid", "gpu_lost",
                                      "gpu_throttled_thermal", "gpu_throttled_power"}));
  EXPECT_EQ(set.source, kBuiltinSource);
}

// Each row, written as a rule file, parses to the rule BuiltinRules() builds
// from it: the rows are in the rule language, with a file's defaults (the
// negation as the clear condition, the log action).
TEST(BuiltinRules, EachRowWrittenAsARuleFileParsesToTheSameRule) {
  auto quoted = [](std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  };
  std::string yaml = "version: 1\nrules:\n";
  for (const BuiltinRule& row : BuiltinRuleRows()) {
    yaml += fmt::format("  - name: {}\n    condition: {}\n", row.name, quoted(row.condition));
    if (row.for_duration.count() > 0)
      yaml += fmt::format("    for: {}s\n", row.for_duration.count());
    if (!row.clear.empty()) yaml += fmt::format("    clear: {}\n", quoted(row.clear));
    if (row.clear_for.count() > 0) {
      yaml += fmt::format("    clear_for: {}s\n", row.clear_for.count());
    }
    yaml += fmt::format("    severity: {}\n    message: {}\n", SeverityName(row.severity),
                        quoted(row.message));
  }
  Result<RuleSet> file = ParseRules(yaml, "defaults.yaml");
  ASSERT_TRUE(file) << file.error().message() << "\n" << yaml;
  const RuleSet built = BuiltinRules();
  ASSERT_EQ(built.rules.size(), file->rules.size());
  for (std::size_t i = 0; i < built.rules.size(); ++i) {
    const Rule& b = built.rules[i];
    const Rule& f = file->rules[i];
    EXPECT_EQ(b.name, f.name);
    EXPECT_EQ(b.scope, f.scope) << b.name;
    EXPECT_EQ(b.condition.ToString(), f.condition.ToString()) << b.name;
    EXPECT_EQ(b.clear.ToString(), f.clear.ToString()) << b.name;
    EXPECT_EQ(b.for_duration, f.for_duration) << b.name;
    EXPECT_EQ(b.clear_for, f.clear_for) << b.name;
    EXPECT_EQ(b.severity, f.severity) << b.name;
    EXPECT_EQ(b.message, f.message) << b.name;
    ASSERT_EQ(b.actions.size(), 1u) << b.name;
    ASSERT_EQ(f.actions.size(), 1u) << b.name;
    EXPECT_TRUE(std::holds_alternative<LogAction>(b.actions[0])) << b.name;
    EXPECT_TRUE(std::holds_alternative<LogAction>(f.actions[0])) << b.name;
  }
}

TEST(BuiltinRules, MemoryAbove90PercentFor30s) {
  auto mem = [](double r) { return Device(0, {{FieldId::kMemoryUsedRatio, r}}); };
  EXPECT_TRUE(EventsOf("gpu_memory_high", Series({{0, mem(0.89)}, {60, mem(0.89)}})).empty());
  std::vector<Event> ev =
      EventsOf("gpu_memory_high", Series({{0, mem(0.95)}, {30, mem(0.95)}, {40, mem(0.84)}}));
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, Event::Kind::kAlertFiring);
  EXPECT_EQ(ev[0].message, "GPU 0: memory 95.0% used (over 90% for 30s)");
  EXPECT_EQ(ev[1].kind, Event::Kind::kAlertResolved);
}

TEST(BuiltinRules, TemperatureAbove80C) {
  auto temp = [](double c) { return Device(0, {{FieldId::kTemperatureGpuCelsius, c}}); };
  std::vector<Event> ev =
      EventsOf("gpu_temperature_high", Series({{0, temp(85)}, {30, temp(86)}, {40, temp(78)}}));
  ASSERT_EQ(ev.size(), 1u) << "78 °C is above the 75 °C clear";
  EXPECT_EQ(ev[0].message, "GPU 0: temperature 86°C (over 80°C for 30s)");
  EXPECT_TRUE(EventsOf("gpu_temperature_high", Series({{0, temp(80)}, {30, temp(80)}})).empty());
}

TEST(BuiltinRules, StarvedNeedsLowUtilizationForFiveMinutesWithAProcess) {
  auto busy = [](double util, bool process) {
    DeviceSample d = Device(0, {{FieldId::kUtilizationGpuRatio, util}});
    if (process) d.processes.push_back(Process(1, 1, 1e9));
    return d;
  };
  EXPECT_TRUE(
      EventsOf("gpu_starved", Series({{0, busy(0.1, false)}, {600, busy(0.1, false)}})).empty())
      << "an idle GPU with no process is not starved";
  EXPECT_TRUE(
      EventsOf("gpu_starved", Series({{0, busy(0.1, true)}, {299, busy(0.1, true)}})).empty());
  std::vector<Event> ev =
      EventsOf("gpu_starved", Series({{0, busy(0.1, true)}, {300, busy(0.2, true)}}));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_NE(ev[0].message.find("input pipeline"), std::string::npos) << ev[0].message;
  EXPECT_NE(ev[0].message.find("1 process"), std::string::npos) << ev[0].message;
}

TEST(BuiltinRules, EccFiresWhenTheUncorrectedCounterIncreases) {
  auto ecc = [](double n) { return Device(0, {{FieldId::kEccErrorsUncorrectedVolatile, n}}); };
  EXPECT_TRUE(EventsOf("gpu_ecc_uncorrected", Series({{0, ecc(3)}, {10, ecc(3)}})).empty())
      << "old errors are not new";
  std::vector<Event> ev = EventsOf(
      "gpu_ecc_uncorrected", Series({{0, ecc(3)}, {10, ecc(5)}, {20, ecc(5)}, {620, ecc(5)}}));
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, Event::Kind::kAlertFiring);
  EXPECT_EQ(ev[0].value, 2.0);
  EXPECT_EQ(ev[0].severity, Severity::kCritical);
  EXPECT_EQ(ev[1].kind, Event::Kind::kAlertResolved) << "after 10 min without new errors";
  EXPECT_EQ(ev[1].time, testing::At(620));
}

TEST(BuiltinRules, XidFiresOnNewEventsAndNamesTheLatestCode) {
  auto xid = [](double total, double last) {
    return Device(0, {{FieldId::kXidErrorsTotal, total}, {FieldId::kXidLast, last}});
  };
  EXPECT_TRUE(EventsOf("gpu_xid", Series({{0, xid(0, 0)}, {10, xid(0, 0)}})).empty());
  EXPECT_TRUE(EventsOf("gpu_xid", Series({{0, Device(0, {})}, {10, Device(0, {})}})).empty())
      << "no XID source (N/A) never fires";
  std::vector<Event> ev = EventsOf(
      "gpu_xid", Series({{0, xid(0, 0)}, {10, xid(2, 79)}, {20, xid(2, 79)}, {620, xid(2, 79)}}));
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, Event::Kind::kAlertFiring);
  EXPECT_EQ(ev[0].value, 2.0);
  EXPECT_EQ(ev[0].severity, Severity::kCritical);
  EXPECT_NE(ev[0].message.find("XID 79"), std::string::npos) << ev[0].message;
  EXPECT_EQ(ev[1].kind, Event::Kind::kAlertResolved) << "after 10 min without new events";
  EXPECT_EQ(ev[1].time, testing::At(620));
}

TEST(BuiltinRules, GpuLostFiresAtOnceAndResolvesWhenBack) {
  DeviceSample lost = Device(0, {});
  lost.health = DeviceHealth::kLost;
  std::vector<Event> ev =
      EventsOf("gpu_lost", Series({{0, Device(0, {})}, {1, lost}, {2, lost}, {3, Device(0, {})}}));
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, Event::Kind::kAlertFiring);
  EXPECT_EQ(ev[0].time, testing::At(1));
  EXPECT_EQ(ev[0].message, "GPU 0 fell off the bus (GPU_IS_LOST)");
  EXPECT_EQ(ev[1].kind, Event::Kind::kAlertResolved);
}

TEST(BuiltinRules, ThermalThrottlingFor30s) {
  auto reasons = [](double bits) {
    return Device(0, {{FieldId::kClockEventReasons, bits}, {FieldId::kTemperatureGpuCelsius, 88}});
  };
  for (double bits : {0x20, 0x40, 0x8}) {
    std::vector<Event> ev =
        EventsOf("gpu_throttled_thermal", Series({{0, reasons(bits)}, {30, reasons(bits)}}));
    ASSERT_EQ(ev.size(), 1u) << bits;
    EXPECT_EQ(ev[0].message, "GPU 0: clocks held down by heat for 30s (88°C)");
  }
  EXPECT_TRUE(
      EventsOf("gpu_throttled_thermal", Series({{0, reasons(0x4)}, {30, reasons(0x4)}})).empty());
}

TEST(BuiltinRules, PowerThrottlingFor5Minutes) {
  auto reasons = [](double bits) { return Device(0, {{FieldId::kClockEventReasons, bits}}); };
  for (double bits : {0x4, 0x80}) {
    EXPECT_EQ(
        EventsOf("gpu_throttled_power", Series({{0, reasons(bits)}, {300, reasons(bits)}})).size(),
        1u)
        << bits;
  }
  EXPECT_TRUE(
      EventsOf("gpu_throttled_power", Series({{0, reasons(0x4)}, {299, reasons(0x4)}})).empty());
  EXPECT_TRUE(
      EventsOf("gpu_throttled_power", Series({{0, reasons(0x20)}, {300, reasons(0x20)}})).empty());
}

}  // namespace
}  // namespace gpuwatch::rules
