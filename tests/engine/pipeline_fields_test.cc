// Pipeline::Fields(): the fields its rules, diagnoses and leak detector judge.
// A sampler that reads only those (as `top` does) must leave every judgement
// as it is with every field: the same scenario (scenarios/test/judged.yaml,
// something for each judgement) read twice, once with every field and once
// with the pipeline's, gives the same events, alerts, diagnoses and leaks.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "analysis/rules/engine.h"
#include "analysis/rules/rule_parser.h"
#include "engine/pipeline.h"
#include "engine/source.h"
#include "sampler/collect.h"

namespace gpuwatch::engine {
namespace {

// An event as a line. A lost GPU's event names the first call that failed,
// which depends on the calls made: that name is left out.
std::string Line(const Event& e) {
  std::string message = e.message;
  if (e.kind == Event::Kind::kDeviceLost) message = message.substr(0, message.find(" lost: "));
  return fmt::format("{} {} {} gpu={} pid={} value={} ttf={}: {}",
                     e.time.time_since_epoch().count(), EventKindName(e.kind), e.source,
                     e.gpu ? *e.gpu : -1, e.process ? static_cast<long>(e.process->pid) : -1L,
                     e.value ? *e.value : -1.0, e.time_to_full ? e.time_to_full->count() : -1,
                     message);
}

struct Judged {
  std::vector<std::string> events;
  std::vector<std::string> alerts;  // firing at the end
  std::vector<std::string> leaks;   // reports at the end
  std::set<std::string> kinds;      // event kind and source, for what the scenario exercised
};

// Ten minutes of the scenario, a snapshot a second, each read with `fields`
// (nullptr: the pipeline's own).
Judged JudgeScenario(const FieldMask* fields) {
  SourceOptions so;
  so.scenario = std::string(GPUWATCH_SOURCE_DIR) + "/scenarios/test/judged.yaml";
  so.demo_dir = GPUWATCH_BINARY_DIR;
  so.shutdown_nvml_on_close = true;
  setenv("GPUWATCH_FAKE_TIME", "0", 1);
  auto source = OpenSource(so);
  EXPECT_TRUE(source) << source.error().message();
  PipelineOptions po;
  po.log = [](std::string_view) {};
  auto pipeline = Pipeline::Open(po, [](const std::string&) {});
  EXPECT_TRUE(pipeline) << pipeline.error().message();
  Judged out;
  if (!source || !pipeline) return out;
  const FieldMask read = fields ? *fields : (*pipeline)->Fields();
  const auto start = std::chrono::system_clock::time_point(std::chrono::hours(24 * 365 * 56));
  for (int t = 0; t <= 600; ++t) {
    setenv("GPUWATCH_FAKE_TIME", std::to_string(t).c_str(), 1);
    auto snap = std::make_shared<Snapshot>(
        CollectOnce(*source->backend, source->resolver.get(), CollectOptions{.fields = read}));
    snap->time = start + std::chrono::seconds(t);
    snap->sequence = static_cast<std::uint64_t>(t + 1);
    for (const Event& e : (*pipeline)->Observe(snap)) {
      out.events.push_back(Line(e));
      out.kinds.insert(std::string(EventKindName(e.kind)) + " " + e.source);
    }
  }
  unsetenv("GPUWATCH_FAKE_TIME");
  for (const auto& a : (*pipeline)->ActiveAlerts()) {
    out.alerts.push_back(fmt::format("{} gpu={}: {}", a.rule, a.gpu, a.message));
  }
  for (const auto& r : (*pipeline)->leaks().Reports()) {
    out.leaks.push_back(fmt::format("gpu={} suspected={} rate={}", r.subject.gpu,
                                    r.estimate.suspected, r.estimate.rate_bytes_per_s));
  }
  (*pipeline)->Close();
  return out;
}

TEST(PipelineFields, NamesWhatTheBuiltInRulesAndAnalysesRead) {
  auto pipeline = Pipeline::Open(PipelineOptions{}, [](const std::string&) {});
  ASSERT_TRUE(pipeline) << pipeline.error().message();
  const FieldMask m = (*pipeline)->Fields();
  // Conditions, derived fields' sources and message placeholders ({xid_last}).
  for (FieldId id :
       {FieldId::kMemoryUsedRatio, FieldId::kTemperatureGpuCelsius, FieldId::kUtilizationGpuRatio,
        FieldId::kEccErrorsUncorrectedVolatile, FieldId::kXidErrorsTotal, FieldId::kXidLast,
        FieldId::kClockEventReasons, FieldId::kPowerDrawWatts, FieldId::kMemoryUsedBytes,
        FieldId::kMemoryTotalBytes, FieldId::kProcessUsedMemoryBytes}) {
    EXPECT_TRUE(Has(m, id)) << Info(id).key;
  }
  for (FieldId id : {FieldId::kFanSpeedRatio, FieldId::kEnergyJoules, FieldId::kPowerDrawPeakWatts,
                     FieldId::kUtilizationGpuMeanRatio, FieldId::kBar1UsedBytes,
                     FieldId::kRemappedRowsPending, FieldId::kEccErrorsCorrectedAggregate}) {
    EXPECT_FALSE(Has(m, id)) << Info(id).key;
  }
}

TEST(PipelineFields, RecordingPipelinesReadEveryField) {
  const std::string dir = ::testing::TempDir();
  PipelineOptions po;
  po.csv = dir + "/pipeline_fields.csv";
  auto pipeline = Pipeline::Open(po, [](const std::string&) {});
  ASSERT_TRUE(pipeline) << pipeline.error().message();
  EXPECT_EQ((*pipeline)->Fields(), AllFields());
  (*pipeline)->Close();
}

TEST(PipelineFields, AUserRuleAddsWhatItsConditionsAndMessageName) {
  const auto set = rules::ParseRules(R"(version: 1
rules:
  - name: fan
    condition: fan_speed_ratio > 90%
    clear: throttle_power == 0
    message: "GPU {gpu}: fan {value}, BAR1 {bar1_used_bytes}"
  - name: coder
    scope: process
    condition: encoder_utilization_ratio > 50%
)",
                                     "test.yaml");
  ASSERT_TRUE(set) << set.error().message();
  const FieldMask m = rules::FieldsRead(*set);
  EXPECT_TRUE(Has(m, FieldId::kFanSpeedRatio));
  EXPECT_TRUE(Has(m, FieldId::kClockEventReasons)) << "throttle_power's source";
  EXPECT_TRUE(Has(m, FieldId::kBar1UsedBytes)) << "a message placeholder";
  EXPECT_TRUE(Has(m, FieldId::kProcessEncoderUtilizationRatio));
  EXPECT_EQ(m.count(), 4u);
}

TEST(PipelineFields, ItsFieldsAloneGiveTheSameJudgementsAsEveryField) {
  const FieldMask every = AllFields();
  const Judged all = JudgeScenario(&every);
  const Judged only = JudgeScenario(nullptr);
  // The scenario exercised what it is for.
  for (const char* kind :
       {"alert_firing gpu_memory_high", "alert_firing gpu_temperature_high",
        "alert_firing gpu_starved", "alert_firing gpu_ecc_uncorrected", "alert_firing gpu_xid",
        "alert_firing gpu_lost", "alert_firing gpu_throttled_thermal",
        "alert_firing gpu_throttled_power", "alert_resolved gpu_lost", "oom_forecast leak",
        "diagnosis preallocation", "diagnosis throttling", "diagnosis starved"}) {
    EXPECT_TRUE(all.kinds.count(kind)) << kind << " never happened";
  }
  // {xid_last} in the message: a field only a message names.
  EXPECT_THAT(all.events, ::testing::Contains(::testing::HasSubstr("the latest XID 79")));
  EXPECT_EQ(only.events, all.events);
  EXPECT_EQ(only.alerts, all.alerts);
  EXPECT_EQ(only.leaks, all.leaks);
}

}  // namespace
}  // namespace gpuwatch::engine
