// Diagnoses on hand-built snapshot sequences and on the demo fleet through the
// real backend.
#include "analysis/diagnoses/diagnoses.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "../../backends/fake_env.h"
#include "sampler/collect.h"

namespace gpuwatch {
namespace {

using std::chrono::seconds;
constexpr double kGiB = 1024.0 * 1024 * 1024;
const auto kT0 = std::chrono::system_clock::time_point(std::chrono::seconds(1795734000));

Snapshot Gpu(seconds t, double util, double process_bytes, double cpu = 0.2,
             unsigned long long reasons = 0) {
  Snapshot s;
  s.time = kT0 + t;
  DeviceSample d;
  d.fields[FieldId::kMemoryTotalBytes] = Reading::Number(80 * kGiB);
  d.fields[FieldId::kUtilizationGpuRatio] = Reading::Number(util);
  d.fields[FieldId::kClockEventReasons] = Reading::Number(static_cast<double>(reasons));
  if (process_bytes > 0) {
    ProcessSample p;
    p.pid = 42;
    p.host.start_ticks = 7;
    p.host.start_time = kT0 - seconds(5);
    p.fields[FieldId::kProcessUsedMemoryBytes] = Reading::Number(process_bytes);
    p.fields[FieldId::kProcessCpuRatio] = Reading::Number(cpu);
    d.processes.push_back(p);
  }
  s.devices.push_back(d);
  return s;
}

std::vector<Event> Feed(Diagnoser& dx, const std::vector<Snapshot>& snaps) {
  std::vector<Event> all;
  for (const auto& s : snaps) {
    auto e = dx.Observe(s);
    all.insert(all.end(), e.begin(), e.end());
  }
  return all;
}

TEST(Diagnoses, PreallocationIsFlaggedWhenBigFromTheStartAndFlat) {
  Diagnoser dx;
  std::vector<Snapshot> snaps;
  for (int t = 0; t <= 90; t += 10) snaps.push_back(Gpu(seconds(t), 0.5, 60 * kGiB));
  const auto events = Feed(dx, snaps);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].source, "preallocation");
  EXPECT_EQ(events[0].process->pid, 42u);
  EXPECT_NE(events[0].message.find("XLA_PYTHON_CLIENT_PREALLOCATE=false"), std::string::npos);
  EXPECT_NE(events[0].message.find("within seconds of starting"), std::string::npos)
      << events[0].message;
}

TEST(Diagnoses, PreallocationCountsFromTheJumpNotFromTheCudaContext) {
  // As JAX does on an H200: a small CUDA context first, the 75 % block a few
  // seconds later, then flat.
  Diagnoser dx;
  std::vector<Snapshot> snaps;
  snaps.push_back(Gpu(seconds(0), 0.0, 0.5 * kGiB));
  for (int t = 10; t <= 100; t += 10) snaps.push_back(Gpu(seconds(t), 0.0, 60 * kGiB));
  const auto events = Feed(dx, snaps);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].source, "preallocation");
  EXPECT_EQ(events[0].time, kT0 + seconds(30)) << "three flat samples from the jump at 10 s";
}

TEST(Diagnoses, PreallocationIsFlaggedWithinTenSecondsAtTheWatchInterval) {
  Diagnoser dx;
  std::vector<Event> events;
  int flagged_at = -1;
  for (int t = 0; t <= 50 && flagged_at < 0; ++t) {
    for (auto& e : dx.Observe(Gpu(seconds(t), 0.0, 60 * kGiB))) {
      events.push_back(e);
      flagged_at = t;
    }
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_LE(flagged_at, 10);
  EXPECT_GE(flagged_at, 5) << "flat for 5 s first";
  const auto standing = dx.Preallocated();
  ASSERT_EQ(standing.size(), 1u);
  EXPECT_EQ(standing[0].gpu, 0);
  EXPECT_EQ(standing[0].process.pid, 42u);
  EXPECT_DOUBLE_EQ(standing[0].share, 0.75);
  // The process ends: no longer standing.
  Snapshot gone = Gpu(seconds(60), 0.0, 0);
  (void)dx.Observe(gone);
  EXPECT_TRUE(dx.Preallocated().empty());
}

TEST(Diagnoses, SlowGrowthToABigShareIsNotPreallocation) {
  Diagnoser dx;
  std::vector<Snapshot> snaps;
  for (int t = 0; t <= 300; t += 10) snaps.push_back(Gpu(seconds(t), 0.5, (10 + t * 0.2) * kGiB));
  for (int t = 310; t <= 500; t += 10) snaps.push_back(Gpu(seconds(t), 0.5, 70 * kGiB));
  EXPECT_TRUE(Feed(dx, snaps).empty());
}

TEST(Diagnoses, NoPreallocationWhenMemoryMovesOrStaysSmall) {
  Diagnoser moving;
  std::vector<Snapshot> snaps;
  for (int t = 0; t <= 90; t += 10)
    snaps.push_back(Gpu(seconds(t), 0.5, (60 + (t % 20 == 0 ? 5 : 0)) * kGiB));
  EXPECT_TRUE(Feed(moving, snaps).empty()) << "a sawtooth is real use";
  Diagnoser small;
  snaps.clear();
  for (int t = 0; t <= 90; t += 10) snaps.push_back(Gpu(seconds(t), 0.5, 20 * kGiB));
  EXPECT_TRUE(Feed(small, snaps).empty());
}

TEST(Diagnoses, StarvedGpuGetsACpuBoundHint) {
  Diagnoser dx;
  std::vector<Snapshot> snaps;
  for (int t = 0; t <= 360; t += 30)
    snaps.push_back(Gpu(seconds(t), 0.08, 30 * kGiB + t, /*cpu=*/1.0));
  const auto events = Feed(dx, snaps);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].source, "starved");
  EXPECT_NE(events[0].message.find("CPU-bound"), std::string::npos) << events[0].message;
  EXPECT_EQ(dx.starved_totals().at(0), std::chrono::milliseconds(360'000));
}

TEST(Diagnoses, StarvedGpuWithIdleCpuPointsAtTheInputPipeline) {
  Diagnoser dx;
  std::vector<Snapshot> snaps;
  for (int t = 0; t <= 360; t += 30)
    snaps.push_back(Gpu(seconds(t), 0.08, 30 * kGiB + t, /*cpu=*/0.15));
  const auto events = Feed(dx, snaps);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].message.find("input pipeline"), std::string::npos) << events[0].message;
}

TEST(Diagnoses, BusyOrEmptyGpusAreNotStarved) {
  Diagnoser busy;
  std::vector<Snapshot> snaps;
  for (int t = 0; t <= 600; t += 30) snaps.push_back(Gpu(seconds(t), 0.9, 30 * kGiB + t));
  EXPECT_TRUE(Feed(busy, snaps).empty());
  Diagnoser empty;
  snaps.clear();
  for (int t = 0; t <= 600; t += 30) snaps.push_back(Gpu(seconds(t), 0.0, 0));
  EXPECT_TRUE(Feed(empty, snaps).empty()) << "idle with nothing loaded is just idle";
}

TEST(Diagnoses, ThrottlingIsTimedByReasonAndReportedOncePerEpisode) {
  Diagnoser dx;
  std::vector<Snapshot> snaps;
  for (int t = 0; t <= 120; t += 10)
    snaps.push_back(Gpu(seconds(t), 0.9, 30 * kGiB + t, 0.2, 0x20 | 0x40));
  for (int t = 130; t <= 200; t += 10)
    snaps.push_back(Gpu(seconds(t), 0.9, 30 * kGiB + t, 0.2, 0x1));  // idle only
  const auto events = Feed(dx, snaps);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].source, "throttling");
  EXPECT_NE(events[0].message.find("thermal"), std::string::npos);
  EXPECT_EQ(dx.throttle_totals().at(0).thermal, std::chrono::milliseconds(120'000));
  EXPECT_EQ(dx.throttle_totals().at(0).power, std::chrono::milliseconds(0));
  EXPECT_EQ(dx.throttle_totals().at(0).any, std::chrono::milliseconds(120'000))
      << "idle (after 120 s) is not a limit";
}

// What stands is said in the words of the event that reported it, while its
// condition holds, and nothing once it is gone.
TEST(Diagnoses, StandingDiagnosesCarryTheirEventWhileTheConditionHolds) {
  Diagnoser dx;
  std::vector<Snapshot> snaps;
  for (int t = 0; t <= 360; t += 30)
    snaps.push_back(Gpu(seconds(t), 0.08, 30 * kGiB + t, 1.0, 0x40));
  const auto events = Feed(dx, snaps);
  ASSERT_EQ(events.size(), 2u);  // throttled after 60 s, starved after 300 s
  auto standing = dx.Standing();
  ASSERT_EQ(standing.size(), 2u);
  for (const auto& x : standing) {
    const auto e = std::find_if(events.begin(), events.end(),
                                [&](const Event& ev) { return ev.source == x.kind; });
    ASSERT_NE(e, events.end()) << x.kind;
    EXPECT_EQ(x.gpu, 0);
    EXPECT_EQ(x.message, e->message);
    EXPECT_EQ(x.severity, e->severity);
    EXPECT_EQ(x.since, e->time);
  }
  const auto starved = std::find_if(standing.begin(), standing.end(),
                                    [](const auto& x) { return x.kind == "starved"; });
  ASSERT_NE(starved, standing.end());
  ASSERT_TRUE(starved->process.has_value());
  EXPECT_EQ(starved->process->pid, 42);
  EXPECT_EQ(starved->since, kT0 + seconds(300));

  dx.Observe(Gpu(seconds(390), 0.9, 30 * kGiB, 1.0, 0x40));  // busy again, still hot
  standing = dx.Standing();
  ASSERT_EQ(standing.size(), 1u);
  EXPECT_EQ(standing[0].kind, "throttling");
  dx.Observe(Gpu(seconds(420), 0.9, 30 * kGiB, 1.0, 0));
  EXPECT_TRUE(dx.Standing().empty());
}

TEST(Diagnoses, StaleSnapshotsChangeNothing) {
  Diagnoser dx;
  Snapshot s = Gpu(seconds(0), 0.05, 30 * kGiB, 1.0);
  s.stale = true;
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(dx.Observe(s).empty());
  EXPECT_TRUE(dx.starved_totals().empty());
}

TEST(Diagnoses, DemoFleetShowsPreallocationStarvationAndThrottling) {
  auto b = testing::OpenDemo(600);
  ASSERT_TRUE(b);
  host::ProcessResolver resolver(testing::DemoHostProc());
  Diagnoser dx;
  std::map<std::string, std::vector<Event>> by_source;
  for (int t = 600; t <= 1000; t += 10) {
    testing::AtTime(t);
    Snapshot s = CollectOnce(*b, &resolver, {});
    s.time = kT0 + seconds(t);
    for (auto& e : dx.Observe(s)) by_source[e.source].push_back(e);
  }
  ASSERT_EQ(by_source["preallocation"].size(), 1u);
  EXPECT_EQ(by_source["preallocation"][0].gpu, 6);
  EXPECT_EQ(by_source["preallocation"][0].process->pid, 41501u);
  ASSERT_EQ(by_source["starved"].size(), 1u);
  EXPECT_EQ(by_source["starved"][0].gpu, 4);
  EXPECT_NE(by_source["starved"][0].message.find("CPU-bound"), std::string::npos)
      << by_source["starved"][0].message;
  ASSERT_GE(by_source["throttling"].size(), 1u);
  EXPECT_EQ(by_source["throttling"][0].gpu, 3);
}

}  // namespace
}  // namespace gpuwatch
