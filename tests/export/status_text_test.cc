#include "export/status_text.h"

#include <gtest/gtest.h>

#include "export/snapshot_json.h"

namespace gpuwatch {
namespace {

TEST(StatusText, DescribesThrottleReasonsButNotIdle) {
  EXPECT_EQ(DescribeClockEventReasons(0x1), "");
  EXPECT_EQ(DescribeClockEventReasons(0x60), "sw thermal slowdown, hw thermal slowdown");
  EXPECT_EQ(DescribeClockEventReasons(0x4), "sw power cap");
}

TEST(StatusText, HumanBytes) {
  EXPECT_EQ(HumanBytes(512.0 * 1024 * 1024), "512 MiB");
  EXPECT_EQ(HumanBytes(92.5 * 1024 * 1024 * 1024), "92.5 GiB");
}

Snapshot OneGpu() {
  Snapshot s;
  DeviceSample d;
  d.fields[FieldId::kName] = Reading::Text("NVIDIA H200");
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(1024.0 * 1024 * 1024);
  d.fields[FieldId::kMemoryTotalBytes] = Reading::Number(4 * 1024.0 * 1024 * 1024);
  d.fields[FieldId::kFanSpeedRatio] =
      Reading::Absent(Missing::kNotSupported, "nvmlDeviceGetFanSpeed: Not Supported");
  d.fields[FieldId::kTemperatureGpuCelsius] = Reading::Number(85);
  ProcessSample p;
  p.pid = 77;
  p.host.visibility = HostProcess::Visibility::kOtherPidNs;
  d.processes.push_back(p);
  s.devices.push_back(d);
  return s;
}

TEST(StatusText, ShowsNotApplicableNeverZeroAndHiddenPids) {
  const std::string text = RenderStatus(OneGpu(), {});
  EXPECT_NE(text.find("util N/A"), std::string::npos) << text;
  EXPECT_NE(text.find("host pid 77, not visible here"), std::string::npos) << text;
  EXPECT_NE(text.find("1.0 GiB / 4.0 GiB used (25.0%)"), std::string::npos) << text;
  EXPECT_EQ(text.find("\033["), std::string::npos) << "plain when not a terminal";
}

TEST(StatusText, ColoursHotGpuOnATerminal) {
  StatusTextOptions o;
  o.color = true;
  const std::string text = RenderStatus(OneGpu(), o);
  EXPECT_NE(text.find("\033[31m85°C"), std::string::npos) << text;
}

TEST(StatusText, DemoIsLabelled) {
  Snapshot s = OneGpu();
  s.demo = true;
  EXPECT_EQ(RenderStatus(s, {}).rfind("DEMO", 0), 0u);
}

TEST(SnapshotJson, AbsentIsNullWithReason) {
  const auto j = SnapshotToJson(OneGpu(), "h");
  const auto& d = j["devices"][0];
  EXPECT_TRUE(d["fields"]["fan_speed_ratio"].is_null());
  EXPECT_EQ(d["unavailable"]["fan_speed_ratio"]["reason"], "not_supported");
  EXPECT_EQ(d["unavailable"]["fan_speed_ratio"]["detail"], "nvmlDeviceGetFanSpeed: Not Supported");
  EXPECT_EQ(d["fields"]["memory_used_bytes"], 1073741824);
  EXPECT_TRUE(d["fields"]["memory_used_bytes"].is_number_integer());
  EXPECT_EQ(d["processes"][0]["visibility"], "other_pid_namespace");
  EXPECT_EQ(j["schema"], "gpuwatch.snapshot/1");
}

}  // namespace
}  // namespace gpuwatch
