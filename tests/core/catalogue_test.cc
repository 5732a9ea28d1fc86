#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gpuwatch/fields.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch {
namespace {

TEST(Catalogue, KeysPrometheusNamesAndSmiNamesAreUnique) {
  std::set<std::string_view> keys, prom, smi;
  for (const auto& row : Catalogue()) {
    EXPECT_TRUE(keys.insert(row.key).second) << row.key;
    if (!row.prom_name.empty()) {
      EXPECT_TRUE(prom.insert(row.prom_name).second) << row.prom_name;
    }
    if (!row.smi_name.empty() && row.scope != Scope::kProcess) {
      EXPECT_TRUE(smi.insert(row.smi_name).second) << row.smi_name;
    }
  }
}

TEST(Catalogue, PrometheusNamesFollowConventions) {
  for (const auto& row : Catalogue()) {
    if (row.prom_name.empty()) {
      EXPECT_TRUE(row.kind == Kind::kInfo || row.unit == Unit::kText) << row.key;
      continue;
    }
    EXPECT_TRUE(row.prom_name.starts_with("gpuwatch_")) << row.prom_name;
    if (row.kind == Kind::kCounter) {
      EXPECT_TRUE(row.prom_name.ends_with("_total")) << row.prom_name;
    }
    switch (row.unit) {
      case Unit::kBytes:
        EXPECT_TRUE(row.prom_name.ends_with("_bytes")) << row.prom_name;
        break;
      case Unit::kWatts:
        EXPECT_TRUE(row.prom_name.ends_with("_watts")) << row.prom_name;
        break;
      case Unit::kHertz:
        EXPECT_TRUE(row.prom_name.ends_with("_hertz")) << row.prom_name;
        break;
      case Unit::kCelsius:
        EXPECT_TRUE(row.prom_name.ends_with("_celsius")) << row.prom_name;
        break;
      case Unit::kRatio:
        EXPECT_TRUE(row.prom_name.ends_with("_ratio")) << row.prom_name;
        break;
      default:
        break;
    }
  }
}

TEST(Catalogue, EveryRowHasHelpAndItsScopeRange) {
  for (const auto& row : Catalogue()) {
    EXPECT_FALSE(row.help.empty()) << row.key;
    const FieldRange r = RangeOf(row.scope);
    const auto i = static_cast<std::size_t>(row.id);
    EXPECT_GE(i, r.first);
    EXPECT_LT(i, r.first + r.count);
  }
}

TEST(Catalogue, FindsBySmiNameAndAlias) {
  EXPECT_EQ(FindBySmiName("memory.used"), FieldId::kMemoryUsedBytes);
  EXPECT_EQ(FindBySmiName("clocks.sm"), FieldId::kClockSmHertz);
  EXPECT_EQ(FindBySmiName("clocks.current.sm"), FieldId::kClockSmHertz);
  EXPECT_EQ(FindBySmiName("gpu_name"), FieldId::kName);
  EXPECT_EQ(FindBySmiName("clocks_throttle_reasons.active"), FieldId::kClockEventReasons);
  EXPECT_FALSE(FindBySmiName("bogus_field"));
  EXPECT_FALSE(FindBySmiName(""));
  EXPECT_FALSE(FindBySmiName("used_memory")) << "compute-app names are not GPU fields";
}

TEST(Catalogue, FindsByKey) {
  EXPECT_EQ(FindByKey("memory_used_ratio"), FieldId::kMemoryUsedRatio);
  EXPECT_EQ(FindByKey("temperature_gpu_celsius"), FieldId::kTemperatureGpuCelsius);
  EXPECT_FALSE(FindByKey("memory.used"));
}

TEST(Catalogue, WordsIndexTheirList) {
  const FieldInfo& mode = Info(FieldId::kComputeMode);
  EXPECT_EQ(WordFor(mode, 0), "Default");
  EXPECT_EQ(WordFor(mode, 3), "Exclusive_Process");
  EXPECT_EQ(WordFor(mode, 4), "");
  EXPECT_EQ(WordFor(mode, 1.5), "");
  EXPECT_EQ(WordFor(Info(FieldId::kPersistenceMode), 1), "Enabled");
  EXPECT_EQ(WordFor(Info(FieldId::kMemoryUsedBytes), 0), "") << "not a words field";
}

TEST(Catalogue, CadenceMasksPartitionTheDeviceFields) {
  const FieldMask one_shot =
      FieldsWithCadence({Cadence::kStatic, Cadence::kSlow, Cadence::kInterval, Cadence::kBuffers});
  const FieldMask costly = FieldsWithCadence({Cadence::kCostly});
  const FieldMask events = FieldsWithCadence({Cadence::kEvents});
  EXPECT_TRUE((one_shot & costly).none());
  EXPECT_TRUE((one_shot & events).none());
  EXPECT_TRUE((costly & events).none());
  EXPECT_EQ((one_shot | costly | events), AllFields());
  EXPECT_TRUE(Has(events, FieldId::kXidErrorsTotal));
  EXPECT_TRUE(Has(events, FieldId::kXidLast));
  EXPECT_TRUE(Has(costly, FieldId::kEnergyJoules));
  EXPECT_TRUE(Has(costly, FieldId::kPcieTxBytesPerSecond));
  EXPECT_FALSE(Has(costly, FieldId::kMemoryUsedBytes));
}

TEST(Catalogue, DefaultPeriodsFollowCadence) {
  using std::chrono::milliseconds;
  EXPECT_EQ(DefaultPeriod(Cadence::kInterval, milliseconds(10)), milliseconds(10));
  EXPECT_EQ(DefaultPeriod(Cadence::kEvents, milliseconds(10)), milliseconds(10));
  EXPECT_EQ(DefaultPeriod(Cadence::kBuffers, milliseconds(10)), milliseconds(1000));
  EXPECT_EQ(DefaultPeriod(Cadence::kBuffers, milliseconds(5000)), milliseconds(5000));
  EXPECT_EQ(DefaultPeriod(Cadence::kCostly, milliseconds(10)), milliseconds(5000));
  EXPECT_EQ(DefaultPeriod(Cadence::kCostly, milliseconds(60000)), milliseconds(60000));
  EXPECT_EQ(DefaultPeriod(Cadence::kSlow, milliseconds(1000)), milliseconds(10000));
}

TEST(FieldArray, HoldsOnlyItsScope) {
  EXPECT_TRUE(DeviceFields::Holds(FieldId::kMemoryUsedBytes));
  EXPECT_FALSE(DeviceFields::Holds(FieldId::kDriverVersion));
  EXPECT_FALSE(DeviceFields::Holds(FieldId::kProcessRssBytes));
  EXPECT_TRUE(ProcessFields::Holds(FieldId::kProcessRssBytes));
  EXPECT_TRUE(HostFields::Holds(FieldId::kDriverVersion));
}

TEST(FieldArray, StartsNotYetSampled) {
  DeviceFields f;
  EXPECT_FALSE(f[FieldId::kMemoryUsedBytes].ok());
  EXPECT_EQ(f[FieldId::kMemoryUsedBytes].missing(), Missing::kNotYetSampled);
  f[FieldId::kMemoryUsedBytes] = Reading::Number(5);
  EXPECT_EQ(f[FieldId::kMemoryUsedBytes].number(), 5);
}

}  // namespace
}  // namespace gpuwatch
