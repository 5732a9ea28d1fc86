// The real NvmlBackend against the fake NVML library: every fault in the
// spine's fault list has a test here or in nvml_attribution_test.cc.
#include <gtest/gtest.h>

#include "fake_env.h"

namespace gpuwatch {
namespace {

using testing::OpenFake;
using testing::Read;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

TEST(NvmlBackend, ReadsANormalFleet) {
  auto b = OpenFake("fixed.yaml", 100);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->DeviceCount(), 2);
  const HostFields h = b->ReadHost();
  EXPECT_EQ(h[FieldId::kDriverVersion].text(), "580.159.04");
  EXPECT_EQ(h[FieldId::kCudaDriverVersion].text(), "13.0");
  EXPECT_TRUE(b->info().missing_symbols.empty());

  const DeviceSample d = Read(*b, 0);
  EXPECT_EQ(d.health, DeviceHealth::kOk);
  EXPECT_EQ(d.fields[FieldId::kName].text(), "NVIDIA H200");
  EXPECT_EQ(d.fields[FieldId::kUuid].text(), "GPU-ba5eb01e-1a44-0730-738a-4f10e71191a1");
  EXPECT_EQ(d.fields[FieldId::kPciBusId].text(), "00000000:18:00.0");
  EXPECT_EQ(d.fields[FieldId::kComputeCapability].text(), "9.0");
  EXPECT_EQ(d.fields[FieldId::kMemoryTotalBytes].number(), 143771 * kMiB);
  EXPECT_EQ(d.fields[FieldId::kMemoryUsedBytes].number(), 61952 * kMiB);
  EXPECT_EQ(d.fields[FieldId::kMemoryReservedBytes].number(), 616 * kMiB);
  EXPECT_DOUBLE_EQ(d.fields[FieldId::kMemoryUsedRatio].number(), 61952.0 / 143771.0);
  EXPECT_DOUBLE_EQ(d.fields[FieldId::kUtilizationGpuRatio].number(), 0.87);
  EXPECT_EQ(d.fields[FieldId::kTemperatureGpuCelsius].number(), 61);
  EXPECT_EQ(d.fields[FieldId::kTemperatureMemoryCelsius].number(), 66);
  EXPECT_DOUBLE_EQ(d.fields[FieldId::kPowerDrawWatts].number(), 512.5);
  EXPECT_DOUBLE_EQ(d.fields[FieldId::kPowerDrawInstantWatts].number(), 520);
  EXPECT_DOUBLE_EQ(d.fields[FieldId::kPowerLimitEnforcedWatts].number(), 700);
  EXPECT_EQ(d.fields[FieldId::kClockSmHertz].number(), 1980e6);
  EXPECT_EQ(d.fields[FieldId::kPerformanceState].number(), 0);
  EXPECT_DOUBLE_EQ(d.fields[FieldId::kEnergyJoules].number(), 123456.789);
  EXPECT_EQ(d.fields[FieldId::kEccErrorsCorrectedAggregate].number(), 2);
  EXPECT_EQ(d.fields[FieldId::kPersistenceMode].number(), 1);
  ASSERT_EQ(d.processes.size(), 2u);
  EXPECT_EQ(d.processes[0].pid, 5001u);
  EXPECT_EQ(d.processes[0].fields[FieldId::kProcessUsedMemoryBytes].number(), 40 * kGiB);
  EXPECT_FALSE(d.processes[0].gpu_instance_id) << "MIG off: no instance id";
}

TEST(NvmlBackend, FanAbsentOnH200IsNotSupportedNotZero) {
  auto b = OpenFake("fixed.yaml", 100);
  ASSERT_TRUE(b);
  const DeviceSample d = Read(*b, 0);
  ASSERT_FALSE(d.fields[FieldId::kFanSpeedRatio].ok());
  EXPECT_EQ(d.fields[FieldId::kFanSpeedRatio].missing(), Missing::kNotSupported);
  EXPECT_EQ(d.fields[FieldId::kFanSpeedRatio].detail(), "nvmlDeviceGetFanSpeed: Not Supported");
  const DeviceSample l40s = Read(*b, 1);
  EXPECT_TRUE(l40s.fields[FieldId::kFanSpeedRatio].is_number()) << "the L40S has a fan";
}

TEST(NvmlBackend, UnsupportedAndForbiddenFieldsCarryTheirReason) {
  auto b = OpenFake("unsupported.yaml", 1);
  ASSERT_TRUE(b);
  for (int round = 0; round < 2; ++round) {  // the second read comes from the unsupported cache
    const DeviceSample d = Read(*b, 0);
    EXPECT_EQ(d.health, DeviceHealth::kOk);
    EXPECT_EQ(d.fields[FieldId::kTemperatureGpuCelsius].missing(), Missing::kNotSupported);
    EXPECT_EQ(d.fields[FieldId::kClockSmHertz].missing(), Missing::kNotSupported);
    EXPECT_EQ(d.fields[FieldId::kFanSpeedRatio].missing(), Missing::kNotSupported);
    EXPECT_EQ(d.fields[FieldId::kUtilizationEncoderRatio].missing(), Missing::kNotSupported);
    EXPECT_EQ(d.fields[FieldId::kPowerDrawWatts].missing(), Missing::kNoPermission);
    EXPECT_EQ(d.fields[FieldId::kPowerDrawWatts].detail(),
              "nvmlDeviceGetPowerUsage: Insufficient Permissions");
    EXPECT_DOUBLE_EQ(d.fields[FieldId::kUtilizationGpuRatio].number(), 0.10)
        << "the rest still reads";
  }
}

TEST(NvmlBackend, OldDriverWithoutVersionedSymbolsFallsBack) {
  auto b = OpenFake("fixed.yaml", 100, "libnvidia-ml-fake-old.so");
  ASSERT_TRUE(b);
  const auto& missing = b->info().missing_symbols;
  EXPECT_NE(std::find(missing.begin(), missing.end(), "nvmlDeviceGetMemoryInfo_v2"), missing.end());
  EXPECT_NE(std::find(missing.begin(), missing.end(), "nvmlDeviceGetComputeRunningProcesses_v3"),
            missing.end());
  const DeviceSample d = Read(*b, 0);
  EXPECT_EQ(d.health, DeviceHealth::kOk);
  EXPECT_TRUE(d.fields[FieldId::kMemoryUsedBytes].is_number()) << "v1 memory info";
  EXPECT_EQ(d.fields[FieldId::kMemoryReservedBytes].missing(), Missing::kNotSupported)
      << "only _v2 knows the reservation";
  EXPECT_EQ(d.fields[FieldId::kPowerDrawInstantWatts].missing(), Missing::kNotSupported)
      << "nvmlDeviceGetFieldValues is missing";
  EXPECT_TRUE(d.fields[FieldId::kClockEventReasons].is_number()) << "throttle-reasons fallback";
  ASSERT_EQ(d.processes.size(), 2u) << "v1 process list";
  EXPECT_EQ(d.processes[1].fields[FieldId::kProcessUsedMemoryBytes].number(), 20 * kGiB);
  EXPECT_EQ(d.processes[0].fields[FieldId::kProcessSmUtilizationRatio].missing(),
            Missing::kNotSupported);
}

TEST(NvmlBackend, LibraryNotFoundNamesEveryPathTried) {
  nvml::NvmlOptions o;
  o.library_path = "/nonexistent/libnvidia-ml.so.1";
  auto b = nvml::NvmlBackend::Open(o);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code(), Status::Code::kNotFound);
  EXPECT_NE(b.error().message().find("NVML library not found"), std::string::npos);
  EXPECT_NE(b.error().message().find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
}

TEST(NvmlBackend, DriverNotLoadedIsNamedExactly) {
  testing::UseScenario("init_driver_not_loaded.yaml", 0);
  nvml::NvmlOptions o;
  o.library_path = testing::FakeLibrary();
  auto b = nvml::NvmlBackend::Open(o);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code(), Status::Code::kUnavailable);
  EXPECT_EQ(b.error().message().rfind(
                "NVIDIA driver not loaded: nvmlInit_v2 returned Driver Not Loaded (9).", 0),
            0u)
      << b.error().message();
}

TEST(NvmlBackend, VersionMismatchIsNamedExactly) {
  testing::UseScenario("init_version_mismatch.yaml", 0);
  nvml::NvmlOptions o;
  o.library_path = testing::FakeLibrary();
  auto b = nvml::NvmlBackend::Open(o);
  ASSERT_FALSE(b);
  EXPECT_EQ(
      b.error().message().rfind("driver/library version mismatch: nvmlInit_v2 returned RM has "
                                "detected an NVML/RM version mismatch. (18).",
                                0),
      0u)
      << b.error().message();
}

TEST(NvmlBackend, LostGpuIsMarkedWhileOthersKeepReportingThenComesBack) {
  auto b = OpenFake("lost.yaml", 5);
  ASSERT_TRUE(b);
  DeviceSample before = Read(*b, 1);
  EXPECT_EQ(before.health, DeviceHealth::kOk);
  ASSERT_TRUE(before.fields[FieldId::kName].is_text());

  testing::AtTime(15);
  DeviceSample lost = before;
  b->ReadDevice(1, AllFields(), true, lost);
  EXPECT_EQ(lost.health, DeviceHealth::kLost);
  EXPECT_NE(lost.health_detail.find("GPU is lost"), std::string::npos) << lost.health_detail;
  EXPECT_EQ(lost.fields[FieldId::kUtilizationGpuRatio].missing(), Missing::kDeviceLost);
  EXPECT_EQ(lost.fields[FieldId::kName].text(), "NVIDIA H200") << "identity read before stays";
  for (int other : {0, 2}) {
    const DeviceSample d = Read(*b, other);
    EXPECT_EQ(d.health, DeviceHealth::kOk) << other;
    EXPECT_TRUE(d.fields[FieldId::kUtilizationGpuRatio].is_number()) << other;
  }

  testing::AtTime(25);
  DeviceSample back = lost;
  b->ReadDevice(1, AllFields(), true, back);
  EXPECT_EQ(back.health, DeviceHealth::kOk);
  EXPECT_DOUBLE_EQ(back.fields[FieldId::kUtilizationGpuRatio].number(), 0.60);
}

TEST(NvmlBackend, ProcessListRaceRetriesWithALargerBuffer) {
  auto b = OpenFake("race.yaml", 1);
  ASSERT_TRUE(b);
  const DeviceSample d = Read(*b, 0);
  EXPECT_EQ(d.health, DeviceHealth::kOk);
  ASSERT_GE(d.processes.size(), 2u) << "the list is read in full despite growing";
  bool saw_6001 = false, saw_6002 = false;
  for (const auto& p : d.processes) {
    saw_6001 |= p.pid == 6001;
    saw_6002 |= p.pid == 6002;
  }
  EXPECT_TRUE(saw_6001 && saw_6002);
}

TEST(NvmlBackend, ImplausibleValuesAreRejectedNotShown) {
  auto b = OpenFake("implausible.yaml", 1);
  ASSERT_TRUE(b);
  const DeviceSample d = Read(*b, 0);
  EXPECT_EQ(d.fields[FieldId::kUtilizationGpuRatio].missing(), Missing::kImplausible);
  EXPECT_NE(d.fields[FieldId::kUtilizationGpuRatio].detail().find("2.5"), std::string::npos);
  EXPECT_EQ(d.fields[FieldId::kMemoryUsedBytes].missing(), Missing::kImplausible);
  EXPECT_EQ(d.fields[FieldId::kMemoryUsedRatio].missing(), Missing::kImplausible);
  ASSERT_EQ(d.processes.size(), 2u);
  for (const auto& p : d.processes) {
    if (p.pid == 7001) {
      EXPECT_EQ(p.fields[FieldId::kProcessSmUtilizationRatio].missing(), Missing::kImplausible);
    } else {
      EXPECT_FALSE(p.fields[FieldId::kProcessSmUtilizationRatio].ok()) << "stale sample rejected";
      EXPECT_NE(p.fields[FieldId::kProcessSmUtilizationRatio].missing(), Missing::kImplausible);
    }
  }
}

TEST(NvmlBackend, MigDevicesAreChildrenOfTheirGpu) {
  auto b = OpenFake("mig.yaml", 1);
  ASSERT_TRUE(b);
  const DeviceSample parent = Read(*b, 0);
  EXPECT_EQ(parent.fields[FieldId::kMigMode].number(), 1);
  ASSERT_EQ(parent.processes.size(), 2u);
  EXPECT_EQ(parent.processes[0].gpu_instance_id, 1u);
  EXPECT_EQ(parent.processes[1].gpu_instance_id, 2u);
  const auto migs = b->ReadMigDevices(0, AllFields(), false);
  ASSERT_EQ(migs.size(), 2u);
  EXPECT_EQ(migs[0].index, 0);
  EXPECT_EQ(migs[0].mig_index, 0);
  EXPECT_EQ(migs[0].gpu_instance_id, 1u);
  EXPECT_EQ(migs[1].gpu_instance_id, 2u);
  EXPECT_EQ(migs[0].fields[FieldId::kUuid].text(), "MIG-11111111-2222-3333-4444-555555555555");
  EXPECT_NE(migs[0].fields[FieldId::kName].text().find("MIG 3g.40gb"), std::string::npos);
  EXPECT_TRUE(migs[0].fields[FieldId::kMemoryTotalBytes].is_number());
}

TEST(NvmlBackend, NoMigDevicesWhenMigIsOff) {
  auto b = OpenFake("fixed.yaml", 100);
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->ReadMigDevices(0, AllFields(), false).empty());
  EXPECT_TRUE(b->ReadMigDevices(7, AllFields(), false).empty()) << "bad index";
}

TEST(NvmlBackend, BadIndexIsAnErrorForThatDeviceOnly) {
  auto b = OpenFake("fixed.yaml", 100);
  ASSERT_TRUE(b);
  DeviceSample d;
  b->ReadDevice(9, AllFields(), true, d);
  EXPECT_EQ(d.health, DeviceHealth::kError);
}

}  // namespace
}  // namespace gpuwatch
