#include "analysis/leaks/leak_tracker.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuwatch::leaks {
namespace {

using Clock = std::chrono::system_clock;
constexpr double kGiB = 1024.0 * kMiB;

ProcessSample Proc(std::uint32_t pid, std::uint64_t start_ticks, std::optional<double> used) {
  ProcessSample p;
  p.pid = pid;
  p.host.start_ticks = start_ticks;
  if (used) p.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(*used);
  return p;
}

DeviceSample Device(int index, double total, std::vector<ProcessSample> processes) {
  DeviceSample d;
  d.index = index;
  d.fields[FieldId::kMemoryTotalBytes] = Reading::Number(total);
  double used = 600 * kMiB;
  for (const auto& p : processes) used += p.fields[FieldId::kProcessUsedMemoryBytes].number_or(0);
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(used);
  d.processes = std::move(processes);
  return d;
}

Snapshot At(double t_s, std::vector<DeviceSample> devices) {
  Snapshot s;
  s.time = Clock::time_point{} +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(t_s));
  s.devices = std::move(devices);
  return s;
}

double Saw(double t) { return 2 * kGiB * std::fmod(t, 71.0) / 71.0; }

// GPU 2 (80 GiB): pid 41101 leaks 400 MiB/min from 20 GiB; pid 41102 is flat.
std::vector<Event> RunLeakyGpu(LeakTracker& tracker, double until_s) {
  std::vector<Event> events;
  for (double t = 0; t <= until_s; t += 10) {
    auto s = At(t, {Device(2, 80 * kGiB,
                           {Proc(41101, 7, 20 * kGiB + 400 * kMiB * t / 60 + Saw(t)),
                            Proc(41102, 9, 8 * kGiB + Saw(t + 30))})});
    for (auto& e : tracker.Observe(s)) events.push_back(std::move(e));
  }
  return events;
}

TEST(LeakTracker, ReportsTheLeakingProcessWithRateFloorAndTimeToFull) {
  LeakTracker tracker;
  auto events = RunLeakyGpu(tracker, 3600);
  const Event* process = nullptr;
  for (const auto& e : events) {
    if (e.process && e.kind == Event::Kind::kLeakSuspected) process = &e;
  }
  ASSERT_NE(process, nullptr);
  EXPECT_EQ(process->process->pid, 41101u);
  EXPECT_EQ(process->process->start_ticks, 7u);
  EXPECT_EQ(process->gpu, 2);
  EXPECT_EQ(process->source, "leak");
  EXPECT_NEAR(*process->value * 60 / kMiB, 400, 40);
  EXPECT_NE(process->message.find("pid 41101 on GPU 2 leaks "), std::string::npos)
      << process->message;
  EXPECT_NE(process->message.find("MiB/min (floor "), std::string::npos) << process->message;
  EXPECT_NE(process->message.find("GPU 2 full in ~"), std::string::npos) << process->message;
  for (const auto& e : events) {
    if (e.process) {
      EXPECT_NE(e.process->pid, 41102u) << e.message;
    }
  }
}

TEST(LeakTracker, ForecastsTimeToFullFromTheDeviceGrowth) {
  LeakTracker tracker;
  RunLeakyGpu(tracker, 3600);
  auto report = tracker.Report(Subject{2, ProcessKey{41101, 7}});
  ASSERT_TRUE(report);
  ASSERT_TRUE(report->time_to_full);
  // At 1 h: peak ~ 20 + 23.4 + 2 + 8 + 2 + 0.6 GiB of 80 GiB, ~24 GiB left at
  // ~400 MiB/min: about an hour.
  EXPECT_GT(report->time_to_full->count(), 45 * 60);
  EXPECT_LT(report->time_to_full->count(), 75 * 60);
  EXPECT_EQ(report->capacity_bytes, 80 * kGiB);
}

TEST(LeakTracker, NoTimeToFullWhileTheDeviceFloorIsFlat) {
  LeakTracker tracker;
  for (double t = 0; t <= 3600; t += 10) {
    tracker.Observe(At(t, {Device(0, 80 * kGiB, {Proc(5, 1, 30 * kGiB + Saw(t))})}));
  }
  auto report = tracker.Report(Subject{0, ProcessKey{5, 1}});
  ASSERT_TRUE(report);
  EXPECT_FALSE(report->estimate.suspected);
  EXPECT_FALSE(report->time_to_full);
}

TEST(LeakTracker, KeysProcessesByPidAndStartTime) {
  LeakTracker tracker;
  tracker.Observe(At(0, {Device(0, 80 * kGiB, {Proc(5, 100, kGiB), Proc(5, 200, kGiB)})}));
  EXPECT_EQ(tracker.tracked(), 3u);  // the device and two processes
  EXPECT_TRUE(tracker.Report(Subject{0, ProcessKey{5, 100}}));
  EXPECT_TRUE(tracker.Report(Subject{0, ProcessKey{5, 200}}));
}

TEST(LeakTracker, ForgetsProcessesThatEndedAndClearsTheirLeak) {
  LeakTracker tracker;
  RunLeakyGpu(tracker, 3600);
  ASSERT_TRUE(tracker.Report(Subject{2, ProcessKey{41101, 7}})->estimate.suspected);
  auto events = tracker.Observe(At(3610, {Device(2, 80 * kGiB, {Proc(41102, 9, 8 * kGiB)})}));
  EXPECT_FALSE(tracker.Report(Subject{2, ProcessKey{41101, 7}}));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, Event::Kind::kLeakCleared);
  EXPECT_NE(events.back().message.find("ended"), std::string::npos);
}

TEST(LeakTracker, KeepsProcessesOfALostDevice) {
  LeakTracker tracker;
  tracker.Observe(At(0, {Device(0, 80 * kGiB, {Proc(5, 1, kGiB)})}));
  DeviceSample lost;
  lost.index = 0;
  lost.health = DeviceHealth::kLost;
  tracker.Observe(At(10, {lost}));
  EXPECT_TRUE(tracker.Report(Subject{0, ProcessKey{5, 1}}));
}

TEST(LeakTracker, SkipsProcessesWithoutAMemoryReading) {
  LeakTracker tracker;
  tracker.Observe(At(0, {Device(0, 80 * kGiB, {Proc(5, 1, std::nullopt)})}));
  EXPECT_FALSE(tracker.Report(Subject{0, ProcessKey{5, 1}}));
  EXPECT_TRUE(tracker.Report(Subject{0, std::nullopt}));
}

TEST(LeakTracker, GivesMiBPerStepWhenStepMarksAreKnown) {
  LeakTracker tracker;
  // 2 steps per second: 400 MiB/min = 3.33 MiB/step.
  for (int i = 0; i <= 10; ++i) {
    tracker.ObserveStep(Clock::time_point{} + std::chrono::seconds(3000 + i * 10), 6000 + i * 20);
  }
  auto events = RunLeakyGpu(tracker, 3600);
  auto report = tracker.Report(Subject{2, ProcessKey{41101, 7}});
  ASSERT_TRUE(report && report->bytes_per_step);
  EXPECT_NEAR(*report->bytes_per_step / kMiB, 400.0 / 120, 0.4);
}

}  // namespace
}  // namespace gpuwatch::leaks
