// A recording played through the sampler: every recorded sample reaches a
// follower exactly once and in order, at any speed and however slowly the
// follower takes them; every field is read from every sample.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "backends/replay/replay_backend.h"
#include "export/lines.h"
#include "sampler/sampler.h"

namespace gpuwatch {
namespace {
namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Snapshots = std::vector<std::shared_ptr<const Snapshot>>;

const auto kT0 = std::chrono::system_clock::time_point(seconds(1795734000));
constexpr int kSamples = 60;

// Sample i of the recording, one a second: a value of each cadence that
// changes every sample.
Snapshot Recorded(int i) {
  Snapshot s;
  s.time = kT0 + seconds(i);
  DeviceSample d;
  d.fields[FieldId::kName] = Reading::Text("NVIDIA H200");
  d.fields[FieldId::kMemoryUsedBytes] = Reading::Number(i);        // every interval
  d.fields[FieldId::kPowerLimitWatts] = Reading::Number(100 + i);  // slow
  d.fields[FieldId::kEnergyJoules] = Reading::Number(1000 + i);    // costly
  s.devices.push_back(d);
  return s;
}

class ReplayPlayback : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    path_ = fs::temp_directory_path() /
            ("gw-playback-" + std::to_string(getpid()) + "-" + std::to_string(n++) + ".jsonl");
    std::ofstream out(path_);
    out << JsonlHeader(Recorded(0), "rec-host") << "\n";
    for (int i = 0; i < kSamples; ++i) out << JsonlSample(Recorded(i)) << "\n";
  }
  void TearDown() override { fs::remove(path_); }

  std::unique_ptr<Sampler> Open(double speed, std::size_t history) {
    auto backend = replay::ReplayBackend::Open({path_.string(), speed});
    EXPECT_TRUE(backend) << backend.error().message();
    if (!backend) return nullptr;
    SamplerOptions o;  // the default 1 s interval: a recording sets its own pace
    o.history = history;
    return std::make_unique<Sampler>(std::move(*backend), nullptr, o);
  }

  fs::path path_;
};

// Everything `follower` takes until the recording is done, sleeping `pause`
// after each snapshot.
Snapshots TakeAll(Sampler::Follower& follower, milliseconds pause) {
  Snapshots out;
  for (int idle = 0; idle < 600 && !follower.done();) {
    auto snap = follower.Next(milliseconds(100));
    if (!snap) {
      ++idle;
      continue;
    }
    out.push_back(snap);
    if (pause.count() > 0) std::this_thread::sleep_for(pause);
  }
  return out;
}

void ExpectEveryRecordedSampleOnceInOrder(const Snapshots& taken) {
  ASSERT_EQ(taken.size(), static_cast<std::size_t>(kSamples));
  for (int i = 0; i < kSamples; ++i) {
    const Snapshot& s = *taken[static_cast<std::size_t>(i)];
    EXPECT_EQ(s.sequence, static_cast<std::uint64_t>(i + 1)) << i;
    EXPECT_EQ(s.time, kT0 + seconds(i)) << "the recorded time, no gap, no repeat";
    ASSERT_EQ(s.devices.size(), 1u);
    const DeviceFields& f = s.devices[0].fields;
    EXPECT_EQ(f[FieldId::kMemoryUsedBytes].number(), i);
    EXPECT_EQ(f[FieldId::kPowerLimitWatts].number(), 100 + i) << "slow fields every sample too";
    EXPECT_EQ(f[FieldId::kEnergyJoules].number(), 1000 + i) << "costly fields every sample too";
    EXPECT_EQ(f[FieldId::kName].text(), "NVIDIA H200");
    EXPECT_FALSE(s.stale);
  }
}

struct Case {
  double speed;
  milliseconds pause;  // what the follower spends on each snapshot
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << "speed " << c.speed << ", " << c.pause.count() << " ms a snapshot";
}

class EveryRecordedSample : public ReplayPlayback, public ::testing::WithParamInterface<Case> {};

TEST_P(EveryRecordedSample, ReachesTheFollowerOnceInOrder) {
  // A ring of 4: a slow follower holds the sampler back rather than lose any.
  auto sampler = Open(GetParam().speed, 4);
  ASSERT_TRUE(sampler);
  auto follower = sampler->Follow();
  sampler->Start();
  const Snapshots taken = TakeAll(*follower, GetParam().pause);
  sampler->Stop();
  ExpectEveryRecordedSampleOnceInOrder(taken);
  EXPECT_EQ(follower->missed(), 0u);
  EXPECT_TRUE(sampler->finished());
  EXPECT_EQ(sampler->Latest()->sequence, static_cast<std::uint64_t>(kSamples))
      << "nothing published twice";
}

INSTANTIATE_TEST_SUITE_P(SpeedsAndFollowers, EveryRecordedSample,
                         ::testing::Values(Case{0, milliseconds(0)}, Case{0, milliseconds(3)},
                                           Case{200, milliseconds(0)}, Case{200, milliseconds(10)}),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return "Speed" +
                                  std::to_string(static_cast<int>(param_info.param.speed)) +
                                  (param_info.param.pause.count() > 0 ? "SlowFollower"
                                                                      : "FastFollower");
                         });

TEST_F(ReplayPlayback, EachOfTwoFollowersGetsEverySample) {
  auto sampler = Open(0, 2);
  ASSERT_TRUE(sampler);
  auto fast = sampler->Follow();
  auto slow = sampler->Follow();
  sampler->Start();
  Snapshots slow_taken;
  std::thread slow_thread([&] { slow_taken = TakeAll(*slow, milliseconds(2)); });
  const Snapshots fast_taken = TakeAll(*fast, milliseconds(0));
  slow_thread.join();
  sampler->Stop();
  ExpectEveryRecordedSampleOnceInOrder(fast_taken);
  ExpectEveryRecordedSampleOnceInOrder(slow_taken);
}

TEST_F(ReplayPlayback, AFollowerThatGoesAwayNoLongerHoldsTheRecordingBack) {
  auto sampler = Open(0, 2);
  ASSERT_TRUE(sampler);
  auto kept = sampler->Follow();
  auto gone = sampler->Follow();
  sampler->Start();
  ASSERT_TRUE(gone->Next(milliseconds(5000)));
  gone.reset();  // after one snapshot
  ExpectEveryRecordedSampleOnceInOrder(TakeAll(*kept, milliseconds(0)));
  sampler->Stop();
}

TEST_F(ReplayPlayback, StopEndsAReplayHeldBackByAFollower) {
  auto sampler = Open(0, 2);
  ASSERT_TRUE(sampler);
  auto follower = sampler->Follow();
  sampler->Start();
  ASSERT_TRUE(follower->Next(milliseconds(5000)));
  sampler->Stop();  // the sampler waits for room: Stop() must still end it
  EXPECT_TRUE(sampler->finished());
  EXPECT_LE(sampler->Latest()->sequence, 3u) << "one taken, at most a ring of 2 more";
}

}  // namespace
}  // namespace gpuwatch
