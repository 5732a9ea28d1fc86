// ReplayBackend on recordings written by the JSON Lines serializer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "backends/replay/jsonl_replay.h"
#include "export/lines.h"

namespace gpuwatch {
namespace {
namespace fs = std::filesystem;
using std::chrono::seconds;
const auto kT0 = std::chrono::system_clock::time_point(seconds(1795734000));

Snapshot Sample(int n) {
  Snapshot s;
  s.time = kT0 + seconds(n);
  s.sequence = static_cast<std::uint64_t>(n + 1);
  s.host[FieldId::kDriverVersion] = Reading::Text("580.159.04");
  DeviceSample d;
  d.fields[FieldId::kName] = Reading::Text("NVIDIA H200");
  d.fields[FieldId::kMemoryTotalBytes] = Reading::Number(100);
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(10.0 * (n + 1));
  d.fields[FieldId::kFanSpeedRatio] = Reading::Absent(Missing::kNotSupported, "x");
  ProcessSample p;
  p.pid = 42;
  p.host.visibility = HostProcess::Visibility::kVisible;
  p.host.user = "ann";
  p.host.command = "python train.py";
  p.host.start_ticks = 77;
  p.host.container_id = "abc";
  p.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(5.0 * (n + 1));
  d.processes.push_back(p);
  s.devices.push_back(d);
  return s;
}

class Recording : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("gw-rec-" + std::to_string(getpid()) + ".jsonl");
  }
  void TearDown() override { fs::remove(path_); }
  void Write(const std::string& text) { std::ofstream(path_) << text; }
  void WriteSamples(int n) {
    std::string text = JsonlHeader(Sample(0), "h") + "\n";
    for (int i = 0; i < n; ++i) text += JsonlSample(Sample(i)) + "\n";
    Write(text);
  }
  fs::path path_;
};

TEST_F(Recording, PlaysBackValuesReasonsAndProcesses) {
  WriteSamples(3);
  auto b = replay::ReplayBackend::Open({path_.string(), 0});
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ((*b)->DeviceCount(), 1);
  EXPECT_EQ((*b)->ReadHost()[FieldId::kDriverVersion].text(), "580.159.04");
  for (int i = 0; i < 3; ++i) {
    DeviceSample d;
    (*b)->ReadDevice(0, AllFields(), true, d);
    EXPECT_EQ(*(*b)->SampleTime(), kT0 + seconds(i));
    EXPECT_EQ(d.fields[FieldId::kName].text(), "NVIDIA H200") << "static facts from the header";
    EXPECT_EQ(d.fields[FieldId::kMemoryUsedBytes].number(), 10.0 * (i + 1));
    EXPECT_EQ(d.fields[FieldId::kFanSpeedRatio].missing(), Missing::kNotSupported) << "never 0";
    ASSERT_EQ(d.processes.size(), 1u);
    EXPECT_EQ(d.processes[0].host.user, "ann");
    EXPECT_EQ(d.processes[0].host.start_ticks, 77u);
    EXPECT_EQ(d.processes[0].host.container_id, "abc");
    EXPECT_EQ(d.processes[0].fields[FieldId::kProcessUsedMemoryBytes].number(), 5.0 * (i + 1));
    EXPECT_EQ((*b)->Finished(), i == 2);
  }
  DeviceSample last;
  (*b)->ReadDevice(0, AllFields(), true, last);
  EXPECT_EQ(last.fields[FieldId::kMemoryUsedBytes].number(), 30.0) << "stays on the last sample";
}

TEST_F(Recording, BadRecordingsAreErrorsNamingFileAndLine) {
  Write("{\"type\":\"header\",\"schema\":\"gpuwatch.jsonl/1\",\"devices\":[]}\nnot json\n");
  auto bad = replay::ReplayBackend::Open({path_.string(), 1});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find(path_.string() + ":2: not a JSON object"), std::string::npos)
      << bad.error().message();
  Write("{\"type\":\"header\",\"schema\":\"gpuwatch.jsonl/9\"}\n");
  EXPECT_NE(replay::ReplayBackend::Open({path_.string(), 1})
                .error()
                .message()
                .find("expected gpuwatch.jsonl/1"),
            std::string::npos);
  Write(JsonlSample(Sample(0)) + "\n");
  EXPECT_NE(
      replay::ReplayBackend::Open({path_.string(), 1}).error().message().find("before the header"),
      std::string::npos);
  Write(JsonlHeader(Sample(0), "h") + "\n");
  EXPECT_NE(replay::ReplayBackend::Open({path_.string(), 1}).error().message().find("no samples"),
            std::string::npos);
  EXPECT_EQ(replay::ReplayBackend::Open({"/nonexistent.jsonl", 1}).error().code(),
            Status::Code::kNotFound);
}

}  // namespace
}  // namespace gpuwatch
