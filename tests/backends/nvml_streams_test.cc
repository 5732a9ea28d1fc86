// The NVML backend's stream probes against the fake library: XID events
// drained per read, and the driver's sample buffers read from where the
// previous read stopped.
#include <gtest/gtest.h>

#include "fake_env.h"

namespace gpuwatch {
namespace {

using testing::OpenFake;
using testing::Read;

TEST(NvmlStreams, XidEventsCountSinceTheFirstReadAndKeepTheLatestCode) {
  auto b = OpenFake("xid.yaml", 0.1);
  ASSERT_TRUE(b);
  DeviceSample d = Read(*b, 0);
  EXPECT_EQ(d.fields[FieldId::kXidErrorsTotal].number(), 0);
  EXPECT_EQ(d.fields[FieldId::kXidLast].number(), 0) << "0: none yet";

  testing::AtTime(0.7);
  d = Read(*b, 0);
  EXPECT_EQ(d.fields[FieldId::kXidErrorsTotal].number(), 1);
  EXPECT_EQ(d.fields[FieldId::kXidLast].number(), 79);

  testing::AtTime(1.0);
  d = Read(*b, 0);
  EXPECT_EQ(d.fields[FieldId::kXidErrorsTotal].number(), 2);
  EXPECT_EQ(d.fields[FieldId::kXidLast].number(), 94);
  d = Read(*b, 0);
  EXPECT_EQ(d.fields[FieldId::kXidErrorsTotal].number(), 2) << "each event counted once";

  const DeviceSample other = Read(*b, 1);
  EXPECT_EQ(other.fields[FieldId::kXidErrorsTotal].number(), 0) << "GPU 1 had none";
}

TEST(NvmlStreams, PowerPeakSeesASpikeBetweenReadsAndUtilizationMeanTheWholeInterval) {
  auto b = OpenFake("xid.yaml", 0.1);
  ASSERT_TRUE(b);
  DeviceSample d = Read(*b, 0);
  EXPECT_DOUBLE_EQ(d.fields[FieldId::kPowerDrawPeakWatts].number(), 300);
  EXPECT_DOUBLE_EQ(d.fields[FieldId::kUtilizationGpuMeanRatio].number(), 0.20);

  testing::AtTime(1.0);
  d = Read(*b, 0);
  EXPECT_DOUBLE_EQ(d.fields[FieldId::kPowerDrawPeakWatts].number(), 690)
      << "the 40 ms spike at 0.7 s, gone by the time of the read";
  EXPECT_DOUBLE_EQ(d.fields[FieldId::kPowerDrawInstantWatts].number(), 300);
  EXPECT_NEAR(d.fields[FieldId::kUtilizationGpuMeanRatio].number(), 0.56, 1e-9)
      << "0.2 s and 0.4 s at 20 %, 0.6 s to 1.0 s at 80 %";

  d = Read(*b, 0);
  EXPECT_EQ(d.fields[FieldId::kPowerDrawPeakWatts].missing(), Missing::kNotYetSampled)
      << "no new sample since the previous read: not a stale repeat";
}

TEST(NvmlStreams, OldDriverWithoutTheEntryPointsReportsThemMissing) {
  auto b = OpenFake("xid.yaml", 0.1, "libnvidia-ml-fake-old.so");
  ASSERT_TRUE(b);
  const DeviceSample d = Read(*b, 0);
  EXPECT_EQ(d.health, DeviceHealth::kOk);
  EXPECT_EQ(d.fields[FieldId::kPowerDrawPeakWatts].missing(), Missing::kNotSupported);
  EXPECT_EQ(d.fields[FieldId::kXidErrorsTotal].missing(), Missing::kNotSupported);
  EXPECT_NE(d.fields[FieldId::kXidErrorsTotal].detail().find("nvmlEventSetWait_v2"),
            std::string::npos)
      << d.fields[FieldId::kXidErrorsTotal].detail();
  EXPECT_TRUE(d.fields[FieldId::kMemoryUsedBytes].is_number()) << "the rest is read";
}

}  // namespace
}  // namespace gpuwatch
