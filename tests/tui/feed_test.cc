// The feeds of `top`: the local sampler and pipeline on the demo fleet, and
// a recording on top's own clock (pause, speed, seek), read from this thread
// while the feed writes from its own (run under ThreadSanitizer too).
#include "tui/feed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "engine/pipeline.h"
#include "engine/source.h"
#include "sampler/collect.h"

namespace gpuwatch::tui {
namespace {

namespace fs = std::filesystem;

// Polls `done` on the feed's model until it holds or `seconds` pass.
bool WaitFor(const Feed& feed, const std::function<bool(const TopModel&)>& done,
             double seconds = 60) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    bool ok = false;
    feed.Read([&](const TopModel& m) { ok = done(m); });
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

engine::SourceOptions Demo() {
  engine::SourceOptions o;
  o.demo = true;
  o.demo_dir = GPUWATCH_BINARY_DIR;
  return o;
}

TEST(TopFeed, TheLocalFeedFillsTheModelFromItsOwnThread) {
  auto source = engine::OpenSource(Demo());
  ASSERT_TRUE(source) << source.error().message();
  LocalFeedOptions o;
  o.interval = std::chrono::milliseconds(100);
  o.leases = false;
  o.pipeline.log = [](std::string_view) {};
  auto feed = StartLocalFeed(std::move(*source), o, SourceKind::kDemo, "demo.yaml", "host",
                             [](const std::string&) {});
  ASSERT_TRUE(WaitFor(*feed, [](const TopModel& m) {
    const HostView& h = m.hosts.front();
    const DeviceHistory* d = h.history.device(0);
    return h.state.snapshot && d != nullptr && d->memory_ratio.points.size() >= 3;
  }));
  feed->Read([](const TopModel& m) {
    EXPECT_EQ(m.kind, SourceKind::kDemo);
    EXPECT_TRUE(m.local());
    ASSERT_EQ(m.hosts.size(), 1u);
    EXPECT_EQ(m.hosts[0].state.snapshot->devices.size(), 8u);
    // Only what top draws or judges is read: GPU 6's fan (an L40S) is not.
    const DeviceSample& l40s = m.hosts[0].state.snapshot->devices.at(6);
    EXPECT_TRUE(l40s.fields[FieldId::kMemoryUsedBytes].ok());
    EXPECT_FALSE(l40s.fields[FieldId::kFanSpeedRatio].ok());
  });
  // The pipeline's diagnosis of the demo's pre-allocating JAX job reaches the model.
  EXPECT_TRUE(
      WaitFor(*feed, [](const TopModel& m) { return !m.hosts[0].state.preallocated.empty(); }));
  const std::uint64_t v = feed->version();
  EXPECT_TRUE(WaitFor(*feed, [&](const TopModel& m) { return m.version > v; }));
  feed->Stop();
}

// When sample i of the recording below was taken.
std::chrono::system_clock::time_point Recorded(int i) {
  return std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000 + i));
}

// A recording of the demo fleet: 30 samples 1 s apart.
fs::path Record(const fs::path& dir) {
  const fs::path path = dir / "rec.jsonl";
  engine::PipelineOptions po;
  po.jsonl = path.string();
  po.log = [](std::string_view) {};
  auto pipeline = engine::Pipeline::Open(po, [](const std::string&) {});
  EXPECT_TRUE(pipeline);
  auto source = engine::OpenSource(Demo());
  EXPECT_TRUE(source);
  for (int i = 0; i < 30; ++i) {
    auto snap = std::make_shared<Snapshot>();
    CollectOptions co;
    *snap = CollectOnce(*source->backend, source->resolver.get(), co);
    snap->time = Recorded(i);
    snap->sequence = static_cast<std::uint64_t>(i + 1);
    (*pipeline)->Observe(snap);
  }
  (*pipeline)->Close();
  return path;
}

TEST(TopFeed, ARecordingPausesChangesSpeedSeeksAndAnalysesEverySampleOnce) {
  const fs::path dir = fs::temp_directory_path() / ("gw-top-feed-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path rec = Record(dir);
  ReplayFeedOptions o;
  o.path = rec.string();
  o.speed = 1;
  o.pipeline.log = [](std::string_view) {};
  auto feed = StartReplayFeed(o, [](const std::string&) {});
  ASSERT_TRUE(feed) << feed.error().message();
  ASSERT_TRUE(
      WaitFor(**feed, [](const TopModel& m) { return m.hosts[0].state.snapshot != nullptr; }));
  // Pause: the position stands.
  Action pause;
  pause.kind = Action::Kind::kPause;
  (*feed)->Act(pause);
  ASSERT_TRUE(WaitFor(**feed, [](const TopModel& m) { return m.replay->paused; }));
  std::chrono::system_clock::time_point at;
  (*feed)->Read([&](const TopModel& m) { at = m.replay->at; });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  (*feed)->Read([&](const TopModel& m) { EXPECT_EQ(m.replay->at, at); });
  // Faster, and playing: every sample once, in order, to the end.
  Action faster;
  faster.kind = Action::Kind::kSpeed;
  faster.speed_factor = 64;
  (*feed)->Act(faster);
  (*feed)->Act(pause);
  ASSERT_TRUE(WaitFor(**feed, [](const TopModel& m) { return m.replay->finished; }));
  (*feed)->Read([](const TopModel& m) {
    EXPECT_EQ(m.replay->speed, 64);
    EXPECT_EQ(m.hosts[0].state.snapshot->time, Recorded(29));
    const DeviceHistory* d = m.hosts[0].history.device(0);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->memory_ratio.points.size(), 30u);  // each sample once
  });
  // Seek back 20 s: the analysis starts again and stands 20 s before the end.
  Action back;
  back.kind = Action::Kind::kSeek;
  back.seek_s = -20;
  (*feed)->Act(pause);  // paused, so the position is where the seek put it
  (*feed)->Act(back);
  ASSERT_TRUE(WaitFor(**feed, [](const TopModel& m) {
    return m.hosts[0].state.snapshot && m.hosts[0].state.snapshot->time == Recorded(9);
  }));
  (*feed)->Read([](const TopModel& m) {
    EXPECT_FALSE(m.replay->finished);
    EXPECT_EQ(m.hosts[0].history.device(0)->memory_ratio.points.size(), 10u);
  });
  (*feed)->Stop();
  fs::remove_all(dir);
}

TEST(TopFeed, ARecordingThatCannotBeReadIsAnError) {
  ReplayFeedOptions o;
  o.path = "/nonexistent/rec.jsonl";
  auto feed = StartReplayFeed(o, [](const std::string&) {});
  ASSERT_FALSE(feed);
  EXPECT_THAT(feed.error().message(), ::testing::HasSubstr("/nonexistent/rec.jsonl"));
}

}  // namespace
}  // namespace gpuwatch::tui
