// The sampler thread: cadence per field, publication, history ring, readers
// of the newest snapshot and followers of every one, and the watchdog that
// keeps a hung driver call from freezing readers.
#include "sampler/sampler.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "../backends/fake_env.h"
#include "sampler/lifecycle.h"

namespace gpuwatch {
namespace {

using std::chrono::milliseconds;

// A backend at the seam that records which fields each read asked for.
class CountingBackend final : public Backend {
 public:
  const BackendInfo& info() const override { return info_; }
  HostFields ReadHost() override {
    ++host_reads;
    return {};
  }
  int DeviceCount() const override { return 2; }
  void ReadDevice(int index, const FieldMask& which, bool, DeviceSample& out) override {
    std::lock_guard lock(mu);
    masks.push_back(which);
    out.index = index;
    out.fields[FieldId::kMemoryUsedBytes] = Reading::Number(static_cast<double>(masks.size()));
  }
  std::vector<DeviceSample> ReadMigDevices(int, const FieldMask&, bool) override { return {}; }

  std::mutex mu;
  std::vector<FieldMask> masks;  // GUARDED_BY(mu)
  int host_reads = 0;

 private:
  BackendInfo info_;
};

std::shared_ptr<const Snapshot> WaitFor(const Sampler& s, std::uint64_t sequence) {
  std::shared_ptr<const Snapshot> snap;
  for (int i = 0; i < 500 && (!snap || snap->sequence < sequence); ++i) {
    snap = s.WaitNewer(snap ? snap->sequence : 0, milliseconds(100));
    if (!snap) snap = s.Latest();
  }
  return snap;
}

TEST(Sampler, PublishesNumberedSnapshotsIntoABoundedRing) {
  auto backend = std::make_unique<CountingBackend>();
  SamplerOptions o;
  o.interval = milliseconds(10);
  o.history = 4;
  Sampler s(std::move(backend), nullptr, o);
  EXPECT_EQ(s.Latest(), nullptr);
  auto follower = s.Follow();  // takes nothing: the ring fills to its bound
  s.Start();
  auto snap = WaitFor(s, 6);
  ASSERT_TRUE(snap);
  EXPECT_GE(snap->sequence, 6u);
  s.Stop();
  const auto history = s.History();
  ASSERT_EQ(history.size(), 4u) << "the ring keeps the newest 4";
  for (std::size_t i = 1; i < history.size(); ++i) {
    EXPECT_EQ(history[i]->sequence, history[i - 1]->sequence + 1);
  }
  EXPECT_EQ(history.back()->sequence, s.Latest()->sequence);
}

// What every follower has taken leaves the ring: followers that keep up hold
// one snapshot, whatever the ring's size (the daemon's memory at 512
// processes, docs/BENCHMARKS.md).
TEST(Sampler, TheRingHoldsOnlyWhatAFollowerHasYetToTake) {
  SamplerOptions o;
  o.interval = milliseconds(10);
  o.history = 8;
  Sampler s(std::make_unique<CountingBackend>(), nullptr, o);
  auto follower = s.Follow();
  s.Start();
  ASSERT_TRUE(WaitFor(s, 5));
  s.Stop();
  const std::size_t held = s.History().size();
  EXPECT_GE(held, 5u) << "nothing taken yet";
  std::size_t taken = 0;
  while (auto snap = follower->Next(milliseconds(100))) {
    ++taken;
    const auto ring = s.History();
    ASSERT_FALSE(ring.empty());
    EXPECT_EQ(ring.front()->sequence,
              std::min<std::uint64_t>(snap->sequence + 1, s.Latest()->sequence))
        << "only what is still to take, else the newest";
  }
  EXPECT_EQ(taken, held);
  ASSERT_EQ(s.History().size(), 1u);
  EXPECT_EQ(s.History().front(), s.Latest());

  Sampler alone(std::make_unique<CountingBackend>(), nullptr, o);
  alone.Start();
  ASSERT_TRUE(WaitFor(alone, 5));
  alone.Stop();
  EXPECT_EQ(alone.History().size(), 1u) << "no follower: the newest only";
}

// The masks a sampler with `o` (10 ms, slow fields hourly) asked its two
// GPUs for over at least five samples, and how often it read the host.
struct Asked {
  std::vector<FieldMask> masks;
  int host_reads = 0;
};
Asked AskedFor(SamplerOptions o) {
  auto backend = std::make_unique<CountingBackend>();
  CountingBackend* raw = backend.get();
  o.interval = milliseconds(10);
  o.slow_period = std::chrono::hours(1);
  Sampler s(std::move(backend), nullptr, o);
  s.Start();
  EXPECT_TRUE(WaitFor(s, 5));
  s.Stop();
  std::lock_guard lock(raw->mu);
  EXPECT_GE(raw->masks.size(), 10u);
  return {raw->masks, raw->host_reads};
}

TEST(Sampler, ReadsStaticFieldsOnceAndCostlyOnesAtTheirOwnPeriod) {
  SamplerOptions o;
  o.costly_period = std::chrono::hours(1);
  const Asked asked = AskedFor(o);
  EXPECT_EQ(asked.host_reads, 1);
  for (std::size_t i = 0; i < asked.masks.size(); ++i) {
    const bool first_round = i < 2;  // two devices
    EXPECT_EQ(Has(asked.masks[i], FieldId::kName), first_round) << i;
    EXPECT_EQ(Has(asked.masks[i], FieldId::kEnergyJoules), first_round) << i;
    EXPECT_EQ(Has(asked.masks[i], FieldId::kPowerLimitWatts), first_round) << i;
    EXPECT_TRUE(Has(asked.masks[i], FieldId::kMemoryUsedBytes)) << i;
  }
}

// A consumer that needs only some fields (top) names them: the others are
// never asked for, at any cadence; those named keep their cadence.
TEST(Sampler, AsksOnlyForTheFieldsItIsGiven) {
  SamplerOptions o;
  o.fields = FieldMask();
  for (FieldId id : {FieldId::kName, FieldId::kMemoryUsedBytes, FieldId::kPowerLimitWatts}) {
    Set(o.fields, id);
  }
  const Asked asked = AskedFor(o);
  for (std::size_t i = 0; i < asked.masks.size(); ++i) {
    const bool first_round = i < 2;  // two devices
    EXPECT_EQ(asked.masks[i] & ~o.fields, FieldMask()) << i << ": " << asked.masks[i];
    EXPECT_EQ(Has(asked.masks[i], FieldId::kName), first_round) << i;
    EXPECT_EQ(Has(asked.masks[i], FieldId::kPowerLimitWatts), first_round) << i;
    EXPECT_TRUE(Has(asked.masks[i], FieldId::kMemoryUsedBytes)) << i;
  }
}

TEST(Sampler, KeepsValuesOfFieldsNotReadThisTick) {
  auto b = testing::OpenFake("fixed.yaml", 100);
  ASSERT_TRUE(b);
  SamplerOptions o;
  o.interval = milliseconds(10);
  Sampler s(std::move(b), nullptr, o);
  s.Start();
  auto snap = WaitFor(s, 3);
  s.Stop();
  ASSERT_TRUE(snap);
  ASSERT_EQ(snap->devices.size(), 2u);
  EXPECT_EQ(snap->devices[0].fields[FieldId::kName].text(), "NVIDIA H200") << "read once, kept";
  EXPECT_TRUE(snap->devices[0].fields[FieldId::kEnergyJoules].is_number()) << "costly, kept";
  EXPECT_EQ(snap->devices[0].processes.size(), 2u);
  EXPECT_FALSE(snap->stale);
}

// A sampler at 20 ms with a 200 ms hang limit over the fake NVML playing
// `scenario` (written to a scratch file) from scenario time 10 s.
class HangingScenario {
 public:
  explicit HangingScenario(const std::string& scenario)
      : dir_(std::filesystem::temp_directory_path() / ("gw-hang-" + std::to_string(getpid()))) {
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "hang.yaml") << scenario;
    setenv("GPUWATCH_FAKE_SCENARIO", (dir_ / "hang.yaml").c_str(), 1);
    testing::AtTime(10);
    nvml::NvmlOptions no;
    no.library_path = testing::FakeLibrary();
    auto b = nvml::NvmlBackend::Open(no);
    EXPECT_TRUE(b) << b.error().message();
    SamplerOptions o;
    o.interval = milliseconds(20);
    o.hang_after = milliseconds(200);
    if (b) sampler_ = std::make_unique<Sampler>(std::move(*b), nullptr, o);
  }
  ~HangingScenario() {
    sampler_.reset();
    std::filesystem::remove_all(dir_);
  }
  Sampler* sampler() { return sampler_.get(); }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<Sampler> sampler_;
};

TEST(Sampler, WhileEveryGpuHangsTheLastSnapshotIsRepublishedStale) {
  HangingScenario hanging(
      "devices:\n  - {name: NVIDIA H200, power_draw: 300}\n"
      "faults:\n  - hang: {call: nvmlDeviceGetPowerUsage, ms: 1500}\n"
      "    device: 0\n    from: 50\n");
  ASSERT_NE(hanging.sampler(), nullptr);
  Sampler& s = *hanging.sampler();
  s.Start();
  auto good = WaitFor(s, 2);
  ASSERT_TRUE(good);
  EXPECT_FALSE(good->stale);
  testing::AtTime(60);  // inside the hang window: the next power read blocks 1.5 s
  std::shared_ptr<const Snapshot> stale;
  for (int i = 0; i < 100 && !(stale && stale->stale); ++i)
    stale = s.WaitNewer(stale ? stale->sequence : good->sequence, milliseconds(100));
  ASSERT_TRUE(stale && stale->stale) << "readers get the last snapshot, marked stale";
  EXPECT_TRUE(s.hung());
  EXPECT_EQ(stale->devices[0].fields[FieldId::kPowerDrawWatts].number(), 300) << "last good values";
  testing::AtTime(10);  // after the hang the sampler recovers
  std::shared_ptr<const Snapshot> fresh = stale;
  for (int i = 0; i < 100 && fresh->stale; ++i) {
    auto next = s.WaitNewer(fresh->sequence, milliseconds(100));
    if (next) fresh = next;
  }
  EXPECT_FALSE(fresh->stale);
  EXPECT_FALSE(s.hung());
  s.Stop();
}

TEST(Sampler, AGpuWhoseReadHangsHoldsBackOnlyItself) {
  // GPU 0's power read blocks while the scenario time is in [50, 100).
  HangingScenario hanging(
      "devices:\n  - {name: NVIDIA H200, power_draw: 300}\n"
      "  - {name: NVIDIA H200, power_draw: 310}\n"
      "faults:\n  - hang: {call: nvmlDeviceGetPowerUsage}\n"
      "    device: 0\n    from: 50\n    until: 100\n");
  ASSERT_NE(hanging.sampler(), nullptr);
  Sampler& s = *hanging.sampler();
  auto follower = s.Follow();
  s.Start();
  ASSERT_TRUE(WaitFor(s, 2));
  testing::AtTime(60);
  // Every snapshot while GPU 0 hangs is live for GPU 1 and the last values,
  // marked stale, for GPU 0.
  int both_read_after_hang = 0, one_stale = 0;
  std::vector<Event> events;
  std::shared_ptr<const Snapshot> previous;
  while (one_stale < 5) {
    auto snap = follower->Next(milliseconds(5000));
    ASSERT_TRUE(snap) << "the sampler stopped publishing";
    for (auto& e : LifecycleEvents(previous.get(), *snap)) events.push_back(std::move(e));
    previous = snap;
    ASSERT_EQ(snap->devices.size(), 2u);
    EXPECT_FALSE(snap->stale) << "GPU 1 was read";
    EXPECT_EQ(snap->devices[1].health, DeviceHealth::kOk);
    EXPECT_EQ(snap->devices[1].fields[FieldId::kPowerDrawWatts].number(), 310);
    if (snap->devices[0].health != DeviceHealth::kStale) {
      ++both_read_after_hang;  // samples already in progress when the hang began
      ASSERT_LT(both_read_after_hang, 100) << "GPU 0 never went stale";
      continue;
    }
    ++one_stale;
    EXPECT_EQ(snap->devices[0].fields[FieldId::kPowerDrawWatts].number(), 300) << "last values";
    EXPECT_NE(snap->devices[0].health_detail.find("reading GPU 0 has not returned for"),
              std::string::npos)
        << snap->devices[0].health_detail;
  }
  EXPECT_FALSE(s.hung()) << "GPU 1 answers: the sampler is not hung";
  testing::AtTime(200);  // the window closes: GPU 0's call returns
  while (true) {
    auto snap = follower->Next(milliseconds(5000));
    ASSERT_TRUE(snap) << "the sampler stopped publishing";
    for (auto& e : LifecycleEvents(previous.get(), *snap)) events.push_back(std::move(e));
    previous = snap;
    if (snap->devices[0].health == DeviceHealth::kOk) break;
  }
  s.Stop();
  std::vector<std::string> seen;
  for (const Event& e : events) {
    if (e.kind == Event::Kind::kDeviceStale || e.kind == Event::Kind::kDeviceBack)
      seen.push_back(std::string(EventKindName(e.kind)) + " " + e.message);
  }
  ASSERT_EQ(seen.size(), 2u) << ::testing::PrintToString(seen);
  EXPECT_EQ(seen[0].rfind("device_stale GPU 0 is not answering (reading GPU 0 has not returned", 0),
            0u)
      << seen[0];
  EXPECT_EQ(seen[1], "device_back GPU 0 answers again");
}

TEST(Sampler, LiveGpusAreReadAtTheIntervalNotAsFastAsPossible) {
  SamplerOptions o;
  o.interval = std::chrono::hours(1);
  Sampler s(std::make_unique<CountingBackend>(), nullptr, o);
  auto follower = s.Follow();
  s.Start();
  ASSERT_TRUE(WaitFor(s, 1));
  EXPECT_EQ(s.WaitNewer(1, milliseconds(300)), nullptr) << "the next sample is an hour away";
  auto first = follower->Next(milliseconds(100));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->sequence, 1u);
  EXPECT_EQ(follower->Next(milliseconds(100)), nullptr);
  EXPECT_FALSE(follower->done()) << "live sampling does not end on its own";
  s.Stop();
  EXPECT_TRUE(follower->done());
  EXPECT_EQ(follower->Next(milliseconds(100)), nullptr);
}

TEST(Sampler, LiveGpusNeverWaitForAFollowerThatFallsBehind) {
  SamplerOptions o;
  o.interval = milliseconds(10);
  o.history = 4;
  Sampler s(std::make_unique<CountingBackend>(), nullptr, o);
  auto follower = s.Follow();  // takes nothing while the sampler runs on
  s.Start();
  auto newest = WaitFor(s, 20);
  ASSERT_TRUE(newest);
  ASSERT_GE(newest->sequence, 20u) << "5 times the ring: the sampler did not wait";
  s.Stop();
  EXPECT_EQ(s.WaitNewer(0, milliseconds(0)), s.Latest()) << "newest-only readers get the newest";
  const std::uint64_t last = s.Latest()->sequence;
  std::vector<std::uint64_t> taken;
  while (auto snap = follower->Next(milliseconds(100))) taken.push_back(snap->sequence);
  ASSERT_EQ(taken.size(), 4u) << "what is still in the ring, in order";
  for (std::size_t i = 0; i < taken.size(); ++i) EXPECT_EQ(taken[i], last - 3 + i);
  EXPECT_EQ(follower->missed(), last - 4) << "the ones that left the ring are counted";
  EXPECT_TRUE(follower->done());
}

TEST(Sampler, TheRingHoldsThirtySecondsOfSamplesFrom16To600) {
  SamplerOptions o;
  o.interval = milliseconds(1000);
  EXPECT_EQ(RingSize(o), 30u);
  o.interval = milliseconds(100);
  EXPECT_EQ(RingSize(o), 300u);
  o.interval = milliseconds(10);
  EXPECT_EQ(RingSize(o), 600u) << "at most 600";
  o.interval = milliseconds(10'000);
  EXPECT_EQ(RingSize(o), 16u) << "at least 16";
  o.history = 5;
  EXPECT_EQ(RingSize(o), 5u) << "as asked";
}

TEST(Sampler, AFollowerStartsAtTheOldestSnapshotInTheRing) {
  SamplerOptions o;
  o.interval = milliseconds(10);
  o.history = 3;
  Sampler s(std::make_unique<CountingBackend>(), nullptr, o);
  auto first = s.Follow();  // takes nothing: the ring stays full
  s.Start();
  ASSERT_TRUE(WaitFor(s, 6));
  s.Stop();
  const auto ring = s.History();
  ASSERT_EQ(ring.size(), 3u);
  auto later = s.Follow();
  for (const auto& want : ring) EXPECT_EQ(later->Next(milliseconds(100)), want);
  EXPECT_EQ(later->missed(), 0u);
  EXPECT_TRUE(later->done());
  for (const auto& want : ring) EXPECT_EQ(first->Next(milliseconds(100)), want);
  EXPECT_TRUE(first->done());
}

TEST(Lifecycle, ReportsLostAndBackDevicesAndProcessStartsAndEnds) {
  Snapshot a;
  a.devices.resize(2);
  a.devices[1].index = 1;
  ProcessSample p;
  p.pid = 10;
  p.host.start_ticks = 5;
  a.devices[0].processes.push_back(p);
  Snapshot b = a;
  b.devices[1].health = DeviceHealth::kLost;
  b.devices[0].processes[0].host.start_ticks = 6;  // pid reused: one ended, one started
  const auto events = LifecycleEvents(&a, b);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kind, Event::Kind::kDeviceLost);
  EXPECT_EQ(events[0].gpu, 1);
  EXPECT_EQ(events[1].kind, Event::Kind::kProcessStarted);
  EXPECT_EQ(events[1].process->start_ticks, 6u);
  EXPECT_EQ(events[2].kind, Event::Kind::kProcessEnded);
  EXPECT_EQ(events[2].process->start_ticks, 5u);
  const auto back = LifecycleEvents(&b, a);
  ASSERT_GE(back.size(), 1u);
  EXPECT_EQ(back[0].kind, Event::Kind::kDeviceBack);
  EXPECT_TRUE(LifecycleEvents(nullptr, a).empty()) << "running processes are not new at start";
}

}  // namespace
}  // namespace gpuwatch
