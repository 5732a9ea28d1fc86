// The sampler's GPU readers: one thread reads every GPU in turn; a read that
// stalls with GPUs waiting behind it brings in another reader, so a GPU whose
// call never returns holds back only itself (and one thread); readers that
// are no longer needed end; a GPU no reader reached by the deadline is asked
// again; and dropping the readers does not wait for a hung call.
#include "sampler/device_readers.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace gpuwatch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// GPUs whose reads block while they are in `held`; counts every read.
class HoldingBackend final : public Backend {
 public:
  explicit HoldingBackend(int count) : count_(count), reads_(static_cast<std::size_t>(count)) {}
  const BackendInfo& info() const override { return info_; }
  HostFields ReadHost() override { return {}; }
  int DeviceCount() const override { return count_; }
  void ReadDevice(int index, const FieldMask&, bool, DeviceSample& out) override {
    std::unique_lock lock(mu_);
    ++in_call_;
    released_.wait(lock, [&] { return !held_.contains(index); });
    --in_call_;
    const auto n = ++reads_[static_cast<std::size_t>(index)];
    out.index = index;
    out.fields[FieldId::kMemoryUsedBytes] = Reading::Number(static_cast<double>(n));
  }
  std::vector<DeviceSample> ReadMigDevices(int, const FieldMask&, bool) override { return {}; }

  void Hold(std::set<int> gpus) {
    std::lock_guard lock(mu_);
    held_ = std::move(gpus);
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      held_.clear();
    }
    released_.notify_all();
  }
  int reads(int index) {
    std::lock_guard lock(mu_);
    return reads_[static_cast<std::size_t>(index)];
  }
  int in_call() {
    std::lock_guard lock(mu_);
    return in_call_;
  }

 private:
  const int count_;
  BackendInfo info_;
  std::mutex mu_;
  std::condition_variable released_;
  std::set<int> held_;      // guarded by mu_
  std::vector<int> reads_;  // guarded by mu_
  int in_call_ = 0;         // guarded by mu_
};

class Readers : public ::testing::Test {
 protected:
  std::vector<DeviceReaders::Gpu> Round(DeviceReaders& r, std::chrono::milliseconds limit) {
    return r.Read(std::vector<FieldMask>(static_cast<std::size_t>(count_), AllFields()),
                  AllFields(), Clock::now() + limit, {});
  }
  // Polls `readers.threads()` for up to 10 s until it is `want`; the last count seen.
  static int ThreadsSettleAt(const DeviceReaders& readers, int want) {
    int seen = readers.threads();
    for (int i = 0; i < 1000 && seen != want; ++i) {
      std::this_thread::sleep_for(10ms);
      seen = readers.threads();
    }
    return seen;
  }

  const int count_ = 8;
  std::shared_ptr<HoldingBackend> backend_ = std::make_shared<HoldingBackend>(count_);
};

TEST_F(Readers, OneThreadReadsEveryGpuEveryRound) {
  DeviceReaders readers(backend_, count_, false);
  EXPECT_EQ(readers.threads(), 0) << "no reader before the first round";
  for (int round = 1; round <= 20; ++round) {
    const auto gpus = Round(readers, 10s);
    ASSERT_EQ(gpus.size(), 8u);
    for (int i = 0; i < count_; ++i) {
      const auto& g = gpus[static_cast<std::size_t>(i)];
      ASSERT_TRUE(g.fresh) << "GPU " << i << ", round " << round;
      EXPECT_EQ(g.device.index, i);
      EXPECT_EQ(g.device.fields[FieldId::kMemoryUsedBytes].number(), round) << "read once a round";
    }
  }
  EXPECT_EQ(readers.threads(), 1);
}

TEST_F(Readers, AGpuWhoseCallHangsHoldsBackOnlyItselfAndOneThread) {
  DeviceReaders readers(backend_, count_, false, ReaderTiming{20ms, 100ms});
  ASSERT_TRUE(Round(readers, 10s)[2].fresh);
  backend_->Hold({2});
  auto gpus = Round(readers, 2s);
  for (int i = 0; i < count_; ++i) {
    EXPECT_EQ(gpus[static_cast<std::size_t>(i)].fresh, i != 2) << "GPU " << i;
  }
  EXPECT_GT(gpus[2].in_call, 0ms);
  // Later rounds leave GPU 2 in its call and read the others on the second reader.
  for (int round = 0; round < 5; ++round) {
    const auto start = Clock::now();
    gpus = Round(readers, 10s);
    EXPECT_LT(Clock::now() - start, 10s) << "the round waited for the hung GPU";
    for (int i = 0; i < count_; ++i) EXPECT_EQ(gpus[static_cast<std::size_t>(i)].fresh, i != 2);
    EXPECT_EQ(backend_->reads(2), 1) << "GPU 2 is not asked again while in its call";
  }
  EXPECT_EQ(readers.threads(), 2) << "the one in the call and one for the others";
  backend_->Release();
  // The call returns: GPU 2 is fresh again, then read every round; the
  // reader no longer needed ends once idle for 100 ms.
  bool back = false;
  for (int i = 0; i < 1000 && !back; ++i) {
    back = Round(readers, 10s)[2].fresh;
    if (!back) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(back) << "GPU 2's call returned but it stayed stale";
  gpus = Round(readers, 10s);
  for (int i = 0; i < count_; ++i) EXPECT_TRUE(gpus[static_cast<std::size_t>(i)].fresh);
  EXPECT_EQ(ThreadsSettleAt(readers, 1), 1);
}

TEST_F(Readers, EveryGpuHungHoldsOneThreadEachAndNoMore) {
  DeviceReaders readers(backend_, count_, false, ReaderTiming{5ms, 100ms});
  backend_->Hold({0, 1, 2, 3, 4, 5, 6, 7});
  for (const auto& g : Round(readers, 2s)) EXPECT_FALSE(g.fresh);
  EXPECT_EQ(backend_->in_call(), 8) << "every GPU reached a reader";
  EXPECT_EQ(readers.threads(), 8);
  const auto start = Clock::now();
  for (const auto& g : Round(readers, 10s)) EXPECT_FALSE(g.fresh);
  EXPECT_LT(Clock::now() - start, 5s) << "nothing to ask: the round does not wait";
  EXPECT_EQ(readers.threads(), 8);
  backend_->Release();
  int fresh = 0;
  for (int i = 0; i < 200 && fresh < count_; ++i) {
    fresh = 0;
    for (const auto& g : Round(readers, 10s)) fresh += g.fresh;
  }
  EXPECT_EQ(fresh, count_);
  EXPECT_EQ(ThreadsSettleAt(readers, 1), 1);
}

TEST_F(Readers, AGpuNoReaderReachedByTheDeadlineIsAskedAgain) {
  // A reader comes for the GPUs behind a stalled call only after 300 ms:
  // a 50 ms round ends with GPU 1 still queued.
  DeviceReaders readers(backend_, 2, false, ReaderTiming{300ms, 10s});
  backend_->Hold({0});
  auto gpus = readers.Read({AllFields(), AllFields()}, AllFields(), Clock::now() + 50ms, {});
  EXPECT_FALSE(gpus[0].fresh);
  EXPECT_FALSE(gpus[1].fresh) << "no reader reached GPU 1";
  EXPECT_EQ(backend_->reads(1), 0);
  gpus = readers.Read({AllFields(), AllFields()}, AllFields(), Clock::now() + 10s, {});
  EXPECT_FALSE(gpus[0].fresh);
  EXPECT_TRUE(gpus[1].fresh) << "asked again, read by a second reader";
  EXPECT_EQ(backend_->reads(1), 1);
  backend_->Release();
}

TEST_F(Readers, DroppingThemDoesNotWaitForAHungCall) {
  {
    DeviceReaders readers(backend_, count_, false, ReaderTiming{5ms, 10s});
    backend_->Hold({0});
    EXPECT_FALSE(Round(readers, 200ms)[0].fresh);
  }  // returns with GPU 0's reader still in its call
  EXPECT_EQ(backend_->in_call(), 1);
  backend_->Release();
  // The reader left in the call ends once it returns, and lets go of the backend.
  for (int i = 0; i < 1000 && backend_.use_count() > 1; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(backend_.use_count(), 1);
}

TEST_F(Readers, AStopEndsTheWait) {
  DeviceReaders readers(backend_, count_, false);
  backend_->Hold({0});
  std::stop_source stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(50ms);
    stop.request_stop();
  });
  const auto start = Clock::now();
  readers.Read(std::vector<FieldMask>(8, AllFields()), AllFields(), Clock::now() + 60s,
               stop.get_token());
  EXPECT_LT(Clock::now() - start, 30s);
  stopper.join();
  backend_->Release();
}

}  // namespace
}  // namespace gpuwatch
