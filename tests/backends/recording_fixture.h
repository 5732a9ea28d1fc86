// What the recording tests share: a sample with every kind of value, a
// recording file of a test's own, and readers of what was written.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "backends/replay/replay_backend.h"
#include "export/lines.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::recording_test {
namespace fs = std::filesystem;
using std::chrono::seconds;
inline const auto kT0 = std::chrono::system_clock::time_point(seconds(1795734000));

inline Snapshot Sample(int n) {
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
  p.host.container_runtime = "containerd";
  p.host.pod_uid = "0f1e2d3c";
  p.host.pod = "trainer-0";
  p.host.pod_namespace = "ml";
  p.host.container_name = "main";
  p.host.start_time = kT0 - seconds(30);
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

inline std::vector<std::string> LinesOf(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::size_t Columns(const std::string& row) {
  return static_cast<std::size_t>(std::count(row.begin(), row.end(), ',')) + 1;
}

inline std::string ErrorOf(const fs::path& p) {
  auto b = replay::ReplayBackend::Open({p.string(), 0});
  return b ? "no error" : b.error().message();
}

}  // namespace gpuwatch::recording_test
