#include "backends/nvml/plausibility.h"

#include <gtest/gtest.h>

namespace gpuwatch::nvml {
namespace {

TEST(Plausibility, KeepsSaneValues) {
  DeviceFields f;
  f[FieldId::kUtilizationGpuRatio] = Reading::Number(1.0);
  f[FieldId::kMemoryTotalBytes] = Reading::Number(100);
  f[FieldId::kMemoryUsedBytes] = Reading::Number(100);
  f[FieldId::kTemperatureGpuCelsius] = Reading::Number(95);
  RejectImplausible(f);
  EXPECT_TRUE(f[FieldId::kUtilizationGpuRatio].is_number());
  EXPECT_TRUE(f[FieldId::kMemoryUsedBytes].is_number());
  EXPECT_TRUE(f[FieldId::kTemperatureGpuCelsius].is_number());
}

TEST(Plausibility, RejectsImpossibleValuesWithTheValueInTheDetail) {
  DeviceFields f;
  f[FieldId::kUtilizationMemoryRatio] = Reading::Number(1.01);
  f[FieldId::kTemperatureGpuCelsius] = Reading::Number(255);
  f[FieldId::kPowerLimitMaxWatts] = Reading::Number(700);
  f[FieldId::kPowerDrawWatts] = Reading::Number(65535);
  f[FieldId::kClockSmMaxHertz] = Reading::Number(1980e6);
  f[FieldId::kClockSmHertz] = Reading::Number(4000e6);
  RejectImplausible(f);
  EXPECT_EQ(f[FieldId::kUtilizationMemoryRatio].missing(), Missing::kImplausible);
  EXPECT_EQ(f[FieldId::kTemperatureGpuCelsius].missing(), Missing::kImplausible);
  EXPECT_NE(f[FieldId::kTemperatureGpuCelsius].detail().find("255"), std::string::npos);
  EXPECT_EQ(f[FieldId::kPowerDrawWatts].missing(), Missing::kImplausible);
  EXPECT_EQ(f[FieldId::kClockSmHertz].missing(), Missing::kImplausible);
}

TEST(Plausibility, RejectsProcessUtilizationOver100Percent) {
  ProcessFields f;
  f[FieldId::kProcessSmUtilizationRatio] = Reading::Number(1.8);
  f[FieldId::kProcessMemoryUtilizationRatio] = Reading::Number(0.5);
  RejectImplausible(f);
  EXPECT_EQ(f[FieldId::kProcessSmUtilizationRatio].missing(), Missing::kImplausible);
  EXPECT_TRUE(f[FieldId::kProcessMemoryUtilizationRatio].is_number());
}

}  // namespace
}  // namespace gpuwatch::nvml
