#include "analysis/leaks/leak_tracker.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/leaks/leak_detector.h"

namespace gpuwatch::leaks {
namespace {

using Clock = std::chrono::system_clock;

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
  for (double t = 0; t <= until_s; t += 2) {
    auto s = At(t, {Device(2, 80 * kGiB,
                           {Proc(41101, 7, 20 * kGiB + 400 * kMiB * t / 60 + Saw(t)),
                            Proc(41102, 9, 8 * kGiB + Saw(t + 30))})});
    for (auto& e : tracker.Observe(s)) events.push_back(std::move(e));
  }
  return events;
}

const Event* First(const std::vector<Event>& events, Event::Kind kind,
                   std::optional<std::uint32_t> pid) {
  for (const auto& e : events) {
    if (e.kind == kind && (e.process ? std::optional(e.process->pid) : std::nullopt) == pid)
      return &e;
  }
  return nullptr;
}

TEST(LeakTracker, ReportsTheLeakingProcessWithRateFloorAndTimeToFull) {
  LeakTracker tracker;
  const auto events = RunLeakyGpu(tracker, 3600);
  const Event* verdict = First(events, Event::Kind::kLeakSuspected, 41101);
  ASSERT_NE(verdict, nullptr);
  EXPECT_EQ(verdict->gpu, 2);
  EXPECT_EQ(verdict->source, "leak");
  ASSERT_TRUE(verdict->value);
  EXPECT_NEAR(*verdict->value * 60 / kMiB, 400, 40);
  ASSERT_TRUE(verdict->time_to_full);
  EXPECT_NE(verdict->message.find("pid 41101 on GPU 2 leaks"), std::string::npos)
      << verdict->message;
  EXPECT_NE(verdict->message.find("GPU 2 full in"), std::string::npos) << verdict->message;
  EXPECT_EQ(First(events, Event::Kind::kLeakSuspected, 41102), nullptr) << "the flat process";
  const auto report = tracker.Report(Subject{2, ProcessKey{41101, 7}, {}});
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->estimate.suspected);
  EXPECT_EQ(report->capacity_bytes, 80 * kGiB);
}

TEST(LeakTracker, ForecastsBeforeTheVerdictAndWithinTheBudget) {
  // About 130 min to full: the warning is due within 13 min.
  LeakTracker tracker;
  const auto events = RunLeakyGpu(tracker, 3600);
  const Event* forecast = First(events, Event::Kind::kOomForecast, 41101);
  const Event* verdict = First(events, Event::Kind::kLeakSuspected, 41101);
  ASSERT_NE(forecast, nullptr);
  ASSERT_NE(verdict, nullptr);
  EXPECT_LT(forecast->time, verdict->time);
  EXPECT_LE(forecast->time - Clock::time_point{}, std::chrono::minutes(13));
  ASSERT_TRUE(forecast->time_to_full);
  const double elapsed_min =
      std::chrono::duration<double>(forecast->time - Clock::time_point{}).count() / 60;
  const double truth_min =
      (80 * kGiB - 600 * kMiB - 8 * kGiB - 2 * kGiB - 20 * kGiB - 400 * kMiB * elapsed_min) /
      (400 * kMiB);
  EXPECT_NEAR(static_cast<double>(forecast->time_to_full->count()) / 60, truth_min,
              0.25 * truth_min);
  EXPECT_NE(forecast->message.find("memory grows"), std::string::npos) << forecast->message;
}

TEST(LeakTracker, TimeToFullOnlyWhileTheSeriesGrows) {
  LeakTracker tracker;
  for (double t = 0; t <= 1800; t += 2) {
    tracker.Observe(At(t, {Device(0, 80 * kGiB, {Proc(7, 1, 20 * kGiB + Saw(t))})}));
  }
  const auto device = tracker.Report(Subject{0, std::nullopt, {}});
  ASSERT_TRUE(device);
  EXPECT_FALSE(device->time_to_full);
  EXPECT_FALSE(device->estimate.suspected);
}

TEST(LeakTracker, AForecastOfAProcessThatEndsIsCleared) {
  LeakTracker tracker;
  const Subject leaking{2, ProcessKey{41101, 7}, {}};
  double t = 0;
  for (; t <= 1800; t += 2) {
    (void)tracker.Observe(At(t, {Device(2, 80 * kGiB,
                                        {Proc(41101, 7, 20 * kGiB + 400 * kMiB * t / 60 + Saw(t)),
                                         Proc(41102, 9, 8 * kGiB + Saw(t + 30))})}));
    if (tracker.Report(leaking)->estimate.forecast) break;
  }
  ASSERT_LE(t, 1800) << "no forecast in 30 min";
  auto events = tracker.Observe(At(t + 2, {Device(2, 80 * kGiB, {Proc(41102, 9, 8 * kGiB)})}));
  const Event* cleared = First(events, Event::Kind::kOomForecastCleared, 41101);
  ASSERT_NE(cleared, nullptr);
  EXPECT_NE(cleared->message.find("ended"), std::string::npos);
  EXPECT_FALSE(tracker.Report(leaking));
}

TEST(LeakTracker, FrameworkMemoryPerStepGetsAVerdictNamingTheStepRate) {
  // A job keeps 8 MiB a step and reports allocated bytes every 5 steps (10 steps/s):
  // 300 steps are 30 s, too short for a verdict over time, enough per step.
  LeakTracker tracker;
  tracker.Observe(At(0, {Device(0, 80 * kGiB, {Proc(77, 3, 2 * kGiB)})}));
  std::vector<Event> events;
  for (int step = 5; step <= 300; step += 5) {
    const double t = step / 10.0;
    for (auto& e :
         tracker.ObserveFramework(At(t, {}).time, 0, 77, "torch", kGiB + 8 * kMiB * step)) {
      events.push_back(std::move(e));
    }
    for (auto& e : tracker.ObserveStep(At(t, {}).time, static_cast<std::uint64_t>(step))) {
      events.push_back(std::move(e));
    }
  }
  const Event* verdict = First(events, Event::Kind::kLeakSuspected, 77);
  ASSERT_NE(verdict, nullptr);
  EXPECT_NE(
      verdict->message.find("torch allocated memory of pid 77 on GPU 0 grows 8.0 MiB per step"),
      std::string::npos)
      << verdict->message;
  int verdicts = 0;
  for (const auto& e : events) verdicts += e.kind == Event::Kind::kLeakSuspected ? 1 : 0;
  EXPECT_EQ(verdicts, 1);
}

TEST(LeakTracker, AFlatFrameworkSeriesGetsNoVerdict) {
  LeakTracker tracker;
  std::vector<Event> events;
  for (int step = 5; step <= 2000; step += 5) {
    const auto time = At(step / 10.0, {}).time;
    for (auto& e :
         tracker.ObserveFramework(time, 0, std::nullopt, "torch", kGiB + ((step / 5) % 3) * kMiB)) {
      events.push_back(std::move(e));
    }
    for (auto& e : tracker.ObserveStep(time, static_cast<std::uint64_t>(step))) {
      events.push_back(std::move(e));
    }
  }
  EXPECT_TRUE(events.empty());
}

TEST(LeakTracker, KeysProcessesByPidAndStartTime) {
  LeakTracker tracker;
  tracker.Observe(At(0, {Device(0, 80 * kGiB, {Proc(5, 100, kGiB), Proc(5, 200, kGiB)})}));
  EXPECT_EQ(tracker.tracked(), 3u);  // the device and two processes
  EXPECT_TRUE(tracker.Report(Subject{0, ProcessKey{5, 100}, {}}));
  EXPECT_TRUE(tracker.Report(Subject{0, ProcessKey{5, 200}, {}}));
}

TEST(LeakTracker, ForgetsProcessesThatEndedAndClearsTheirLeak) {
  LeakTracker tracker;
  RunLeakyGpu(tracker, 3600);
  ASSERT_TRUE(tracker.Report(Subject{2, ProcessKey{41101, 7}, {}})->estimate.suspected);
  auto events = tracker.Observe(At(3610, {Device(2, 80 * kGiB, {Proc(41102, 9, 8 * kGiB)})}));
  EXPECT_FALSE(tracker.Report(Subject{2, ProcessKey{41101, 7}, {}}));
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
  EXPECT_TRUE(tracker.Report(Subject{0, ProcessKey{5, 1}, {}}));
}

TEST(LeakTracker, AStaleSnapshotIsNotASample) {
  LeakTracker tracker;
  Snapshot s = At(0, {Device(0, 80 * kGiB, {Proc(5, 1, kGiB)})});
  s.stale = true;
  EXPECT_TRUE(tracker.Observe(s).empty());
  EXPECT_EQ(tracker.tracked(), 0u) << "a hung driver's repeated snapshot feeds no series";
}

TEST(LeakTracker, SkipsProcessesWithoutAMemoryReading) {
  LeakTracker tracker;
  tracker.Observe(At(0, {Device(0, 80 * kGiB, {Proc(5, 1, std::nullopt)})}));
  EXPECT_FALSE(tracker.Report(Subject{0, ProcessKey{5, 1}, {}}));
  EXPECT_TRUE(tracker.Report(Subject{0, std::nullopt, {}}));
}

TEST(LeakTracker, GivesMiBPerStepWhenStepMarksAreKnown) {
  LeakTracker tracker;
  // 2 steps per second: 400 MiB/min = 3.33 MiB/step.
  for (int i = 0; i <= 10; ++i) {
    tracker.ObserveStep(Clock::time_point{} + std::chrono::seconds(3000 + i * 10), 6000 + i * 20);
  }
  (void)RunLeakyGpu(tracker, 3600);
  auto report = tracker.Report(Subject{2, ProcessKey{41101, 7}, {}});
  ASSERT_TRUE(report && report->bytes_per_step);
  EXPECT_NEAR(*report->bytes_per_step / kMiB, 400.0 / 120, 0.4);
}

}  // namespace
}  // namespace gpuwatch::leaks
