// FrameworkTable: framework memory placed on the NVML GPU its process uses
// (the job's CUDA ordinal among them), and forgotten when the process leaves.
#include "analysis/job/framework_table.h"

#include <gtest/gtest.h>

namespace gpuwatch {
namespace {

using std::chrono::seconds;
const auto kTableT0 = std::chrono::system_clock::time_point(seconds(1'700'000'000));

// GPUs 0..3; `on[g]` lists the pids on GPU g.
Snapshot Fleet(std::vector<std::vector<std::uint32_t>> on, int at_s) {
  Snapshot s;
  s.time = kTableT0 + seconds(at_s);
  for (std::size_t g = 0; g < on.size(); ++g) {
    DeviceSample d;
    d.index = static_cast<int>(g);
    for (std::uint32_t pid : on[g]) {
      ProcessSample p;
      p.pid = pid;
      d.processes.push_back(p);
    }
    s.devices.push_back(d);
  }
  return s;
}

TEST(FrameworkTable, PlacesTheJobsCudaOrdinalOnTheGpusItUses) {
  FrameworkTable t;
  // pid 7 runs on GPUs 1 and 3: its device=0 is GPU 1, its device=1 is GPU 3.
  t.Report(7, "torch", 0, {{"allocated", 1e9}, {"reserved", 2e9}}, kTableT0);
  t.Report(7, "torch", 1, {{"allocated", 3e9}}, kTableT0);
  t.Report(9, "jax", 0, {{"bytes_in_use", 5e9}}, kTableT0);  // pid 9 is on GPU 2
  auto got = t.Current(Fleet({{}, {7}, {9}, {7}}, 1));
  ASSERT_EQ(got.size(), 3u);
  std::map<std::pair<std::uint32_t, int>, ProcessFrameworkMemory> by;
  for (auto& f : got) by[{f.pid, f.gpu}] = f;
  EXPECT_EQ(by.at({7, 1}).bytes.at("reserved"), 2e9);
  EXPECT_EQ(by.at({7, 3}).bytes.at("allocated"), 3e9);
  EXPECT_EQ(by.at({9, 2}).framework, "jax");
}

TEST(FrameworkTable, ANewerReportReplacesTheOlder) {
  FrameworkTable t;
  t.Report(7, "torch", 0, {{"allocated", 1e9}}, kTableT0);
  t.Report(7, "torch", 0, {{"allocated", 4e9}}, kTableT0 + seconds(1));
  auto got = t.Current(Fleet({{7}}, 2));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].bytes.at("allocated"), 4e9);
  EXPECT_EQ(got[0].time, kTableT0 + seconds(1));
}

TEST(FrameworkTable, AProcessOnNoGpuIsHiddenThenForgottenAfterTheGrace) {
  FrameworkTable t(seconds(30));
  t.Report(7, "torch", 0, {{"allocated", 1e9}}, kTableT0);
  EXPECT_TRUE(t.Current(Fleet({{}}, 1)).empty()) << "not on a GPU yet: not shown";
  EXPECT_EQ(t.Current(Fleet({{7}}, 10)).size(), 1u) << "kept until it shows up";
  EXPECT_TRUE(t.Current(Fleet({{}}, 20)).empty());
  EXPECT_EQ(t.Current(Fleet({{7}}, 35)).size(), 1u) << "25 s away is within the grace";
  EXPECT_TRUE(t.Current(Fleet({{}}, 70)).empty());
  EXPECT_TRUE(t.Current(Fleet({{7}}, 71)).empty()) << "35 s gone: forgotten";
}

TEST(FrameworkTable, AnOrdinalBeyondTheProcessesGpusIsNotShown) {
  FrameworkTable t;
  t.Report(7, "torch", 2, {{"allocated", 1e9}}, kTableT0);
  EXPECT_TRUE(t.Current(Fleet({{7}, {7}}, 1)).empty()) << "device=2 of a process on 2 GPUs";
}

}  // namespace
}  // namespace gpuwatch
