// The compact status (one line per GPU): what each line says, and that it
// fits the width it is given.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "export/status_text.h"

namespace gpuwatch {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

ProcessSample Holding(std::uint32_t pid, std::string user, double gib) {
  ProcessSample p;
  p.pid = pid;
  p.host.user = std::move(user);
  p.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(gib * kGiB);
  return p;
}

DeviceSample Busy(int index) {
  DeviceSample d;
  d.index = index;
  d.fields[FieldId::kName] = Reading::Text("NVIDIA H200");
  d.fields[FieldId::kUuid] = Reading::Text("GPU-" + std::to_string(index));
  d.fields[FieldId::kTemperatureGpuCelsius] = Reading::Number(61);
  d.fields[FieldId::kUtilizationGpuRatio] = Reading::Number(0.87);
  d.fields[FieldId::kPowerDrawWatts] = Reading::Number(512);
  d.fields[FieldId::kPowerLimitEnforcedWatts] = Reading::Number(700);
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(60.5 * kGiB);
  d.fields[FieldId::kMemoryTotalBytes] = Reading::Number(140.4 * kGiB);
  return d;
}

std::vector<std::string> GpuLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("GPU ")) out.push_back(line);
  }
  return out;
}

// Terminal columns: each UTF-8 sequence is one.
int Columns(const std::string& s) {
  int n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

TEST(CompactStatus, OneLinePerGpuWithWhoHoldsItLargestFirst) {
  Snapshot s;
  DeviceSample d = Busy(0);
  d.processes = {Holding(5002, "ann", 20), Holding(5001, "bob", 40)};
  s.devices = {d, Busy(1)};
  s.devices[1].fields[FieldId::kMemoryUsedBytes] = Reading::Number(0);
  const auto lines = GpuLines(RenderCompactStatus(s, {}));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "GPU 0 H200            61°C  87% 512/700W ████░░░░░░ 60.5/140.4G "
            "bob(40.0G) ann(20.0G)");
  EXPECT_EQ(lines[1], "GPU 1 H200            61°C  87% 512/700W ░░░░░░░░░░  0.0/140.4G -");
}

TEST(CompactStatus, EveryLineFitsTheWidthAndSaysHowManyItLeftOut) {
  Snapshot s;
  DeviceSample d = Busy(0);
  for (std::uint32_t i = 0; i < 12; ++i)
    d.processes.push_back(Holding(6000 + i, "user" + std::to_string(i), 12 - i));
  s.devices = {d};
  StatusTextOptions o;
  o.width = 100;
  const auto lines = GpuLines(RenderCompactStatus(s, o));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_LE(Columns(lines[0]), 100) << lines[0];
  EXPECT_NE(lines[0].find("user0(12.0G) user1(11.0G)"), std::string::npos) << lines[0];
  const auto plus = lines[0].rfind(" +");
  ASSERT_NE(plus, std::string::npos) << lines[0];
  const int shown = static_cast<int>(std::count(lines[0].begin(), lines[0].end(), '('));
  EXPECT_EQ(std::stoi(lines[0].substr(plus + 2)), 12 - shown) << lines[0];
}

TEST(CompactStatus, ANarrowLineCountsTheProcessesOrLeavesThemOut) {
  Snapshot s;
  DeviceSample d = Busy(0);
  d.processes = {Holding(1, "someone-with-a-long-name", 1), Holding(2, "b", 1)};
  s.devices = {d};
  StatusTextOptions o;
  o.width = 72;
  auto lines = GpuLines(RenderCompactStatus(s, o));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].ends_with(" 2 procs")) << lines[0];
  o.width = 64;
  lines = GpuLines(RenderCompactStatus(s, o));
  EXPECT_TRUE(lines[0].ends_with("60.5/140.4G")) << lines[0];
}

TEST(CompactStatus, TroubleIsOnTheLine) {
  Snapshot s;
  DeviceSample hot = Busy(0);
  hot.fields[FieldId::kClockEventReasons] = Reading::Number(0x60);  // sw + hw thermal
  DeviceSample lost = Busy(1);
  lost.health = DeviceHealth::kLost;
  lost.health_detail = "GPU is lost (nvmlDeviceGetMemoryInfo)";
  DeviceSample stale = Busy(2);
  stale.health = DeviceHealth::kStale;
  DeviceSample missing = Busy(3);
  missing.fields[FieldId::kUtilizationGpuRatio] =
      Reading::Absent(Missing::kNotSupported, "not supported");
  s.devices = {hot, lost, stale, missing};
  DeviceSample mig;
  mig.index = 3;
  s.mig_devices = {mig, mig};
  StatusTextOptions o;
  o.leases.leases.push_back({});
  o.leases.leases.back().uuid = "GPU-2";
  o.leases.leases.back().ticket = 7;
  o.leases.leases.back().user = "carol";
  const auto lines = GpuLines(RenderCompactStatus(s, o));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find(" held: thermal "), std::string::npos) << "named once: " << lines[0];
  EXPECT_EQ(lines[1], "GPU 1 H200           LOST: GPU is lost (nvmlDeviceGetMemoryInfo)");
  EXPECT_NE(lines[2].find(" STALE"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find(" leased #7 carol"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find(" N/A "), std::string::npos) << "never 0: " << lines[3];
  EXPECT_NE(lines[3].find(" MIG×2"), std::string::npos) << lines[3];
}

TEST(CompactStatus, ColourMarksHeatAndFullMemory) {
  Snapshot s;
  DeviceSample d = Busy(0);
  d.fields[FieldId::kTemperatureGpuCelsius] = Reading::Number(86);
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(135 * kGiB);
  s.devices = {d};
  StatusTextOptions o;
  o.color = true;
  const std::string text = RenderCompactStatus(s, o);
  EXPECT_NE(text.find("\033[31m 86°C\033[0m"), std::string::npos) << text;
  EXPECT_NE(text.find("\033[31m██████████\033[0m"), std::string::npos) << text;
  o.color = false;
  EXPECT_EQ(RenderCompactStatus(s, o).find('\033'), std::string::npos);
}

TEST(CompactStatus, KeepsTheDemoBannerAndTheQueue) {
  Snapshot s;
  s.demo = true;
  s.devices = {Busy(0)};
  StatusTextOptions o;
  o.leases.queue.push_back({});
  o.leases.queue.back().ticket = 3;
  o.leases.queue.back().user = "dan";
  o.leases.queue.back().wants = "1 GPU";
  const std::string text = RenderCompactStatus(s, o);
  EXPECT_EQ(text.rfind("DEMO: simulated GPUs", 0), 0u) << text;
  EXPECT_NE(text.find("\nqueue: 1 waiting\n  #3  dan  1 GPU  waiting"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpuwatch
