#include "export/smi_format.h"

#include <gtest/gtest.h>

namespace gpuwatch::smi {
namespace {

TEST(SmiFormat, ParsesModifiers) {
  auto f = ParseFormat("csv,noheader,nounits");
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->header);
  EXPECT_FALSE(f->units);
  auto plain = ParseFormat("csv");
  ASSERT_TRUE(plain);
  EXPECT_TRUE(plain->header);
  EXPECT_TRUE(plain->units);
}

TEST(SmiFormat, RejectsUnknownModifierWithNvidiaSmisWords) {
  auto f = ParseFormat("csv,bogus");
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().message(), "Format modifier is not recognized.");
  EXPECT_FALSE(ParseFormat("json"));
}

TEST(SmiFormat, UnknownFieldErrorNamesTheField) {
  auto c = ParseGpuFields("index,bogus_field");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message(), "Field \"bogus_field\" is not a valid field to query.");
  auto a = ParseAppFields("pid,memory.used");
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().message(), "Field \"memory.used\" is not a valid field to query.");
}

TEST(SmiFormat, HeadersUseCanonicalNamesAndUnits) {
  auto c = ParseGpuFields(
      "index,memory.used,clocks.sm,gpu_name,power.draw,temperature.gpu,utilization.gpu,timestamp");
  ASSERT_TRUE(c);
  EXPECT_EQ(Header(*c, {}),
            "index, memory.used [MiB], clocks.current.sm [MHz], name, power.draw [W], "
            "temperature.gpu, utilization.gpu [%], timestamp");
  auto a = ParseAppFields("pid,name,used_memory,gpu_uuid");
  ASSERT_TRUE(a);
  EXPECT_EQ(Header(*a, {}), "pid, process_name, used_gpu_memory [MiB], gpu_uuid");
}

TEST(SmiFormat, ValuesAsNvidiaSmiWritesThem) {
  const double mib = 1024.0 * 1024.0;
  EXPECT_EQ(FormatValue(FieldId::kMemoryUsedBytes, Reading::Number(4714.6 * mib), true),
            "4715 MiB");
  EXPECT_EQ(FormatValue(FieldId::kMemoryUsedBytes, Reading::Number(0), false), "0");
  EXPECT_EQ(FormatValue(FieldId::kPowerDrawWatts, Reading::Number(83.234), true), "83.23 W");
  EXPECT_EQ(FormatValue(FieldId::kPowerLimitWatts, Reading::Number(700), false), "700.00");
  EXPECT_EQ(FormatValue(FieldId::kClockSmHertz, Reading::Number(375e6), true), "375 MHz");
  EXPECT_EQ(FormatValue(FieldId::kUtilizationGpuRatio, Reading::Number(0.07), true), "7 %");
  EXPECT_EQ(FormatValue(FieldId::kTemperatureGpuCelsius, Reading::Number(36), true), "36");
  EXPECT_EQ(FormatValue(FieldId::kPerformanceState, Reading::Number(8), true), "P8");
  EXPECT_EQ(FormatValue(FieldId::kPersistenceMode, Reading::Number(1), true), "Enabled");
  EXPECT_EQ(FormatValue(FieldId::kRemappedRowsPending, Reading::Number(0), true), "No");
  EXPECT_EQ(FormatValue(FieldId::kClockEventReasons, Reading::Number(1), true),
            "0x0000000000000001");
  EXPECT_EQ(FormatValue(FieldId::kClockEventReasonsSupported, Reading::Number(0x1FF), true),
            "0x00000000000001FF");
  EXPECT_EQ(FormatValue(FieldId::kName, Reading::Text("NVIDIA H200"), true), "NVIDIA H200");
}

TEST(SmiFormat, AbsentValuesAreBracketedNeverZero) {
  EXPECT_EQ(
      FormatValue(FieldId::kFanSpeedRatio,
                  Reading::Absent(Missing::kNotSupported, "nvmlDeviceGetFanSpeed: Not Supported"),
                  true),
      "[N/A]");
  EXPECT_EQ(FormatValue(FieldId::kPowerDrawWatts,
                        Reading::Absent(Missing::kNoPermission,
                                        "nvmlDeviceGetPowerUsage: Insufficient Permissions"),
                        true),
            "[Insufficient Permissions]");
  EXPECT_EQ(
      FormatValue(FieldId::kMemoryUsedBytes,
                  Reading::Absent(Missing::kDeviceLost, "nvmlDeviceGetMemoryInfo_v2: GPU is lost"),
                  true),
      "[GPU is lost]");
  EXPECT_EQ(
      FormatValue(FieldId::kUtilizationGpuRatio,
                  Reading::Absent(Missing::kImplausible, "utilization ratio 2.5 is outside 0..1"),
                  true),
      "[N/A]");
}

TEST(SmiFormat, ControlCharactersInProcessNamesAreWrittenOut) {
  auto columns = ParseAppFields("pid,process_name,gpu_name");
  ASSERT_TRUE(columns) << columns.error().message();
  Snapshot snap;
  DeviceSample d;
  d.fields[FieldId::kName] = Reading::Text("NVIDIA\x1b[2J H200");
  ProcessSample p;
  p.pid = 42;
  p.host.visibility = HostProcess::Visibility::kVisible;
  p.host.name = "x";
  p.host.command =
      "\x1b]0;owned\x07"
      "evil\nfake,row --flag";
  EXPECT_EQ(AppRow(*columns, CsvFormat{}, snap, d, p),
            "42, \\x1b]0;owned\\x07evil\\nfake,row, NVIDIA\\x1b[2J H200");
  p.host.command.clear();
  p.host.name = "tab\there";
  EXPECT_EQ(AppRow(*columns, CsvFormat{}, snap, d, p), "42, tab\\there, NVIDIA\\x1b[2J H200");
  auto gpu = ParseGpuFields("name");
  ASSERT_TRUE(gpu);
  EXPECT_EQ(GpuRow(*gpu, CsvFormat{}, snap, d), "NVIDIA\\x1b[2J H200");
}

TEST(SmiFormat, TimestampHasMilliseconds) {
  const auto t = std::chrono::system_clock::time_point(std::chrono::milliseconds(1795734000123));
  const std::string s = Timestamp(t);
  ASSERT_EQ(s.size(), 23u) << s;
  EXPECT_EQ(s.substr(19), ".123");
  EXPECT_EQ(s[4], '/');
}

TEST(SmiFormat, HelpListsEverySmiField) {
  const std::string help = HelpQueryGpu();
  EXPECT_NE(help.find("\"memory.used\""), std::string::npos);
  EXPECT_NE(help.find("\"clocks.current.sm\" or \"clocks.sm\""), std::string::npos);
  EXPECT_NE(help.find("\"timestamp\""), std::string::npos);
}

}  // namespace
}  // namespace gpuwatch::smi
