// The table of driver calls in flight (core/driver_calls.h): what a hang is
// reported as, and what the exit guard reads from a signal handler.
#include "core/driver_calls.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace gpuwatch {
namespace {

using namespace std::chrono_literals;

std::uint64_t NowNanos() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

TEST(DriverCalls, TheOldestCallInFlightIsReportedUntilItReturns) {
  EXPECT_FALSE(OldestDriverCall().has_value());
  auto first = std::make_unique<DriverCallScope>("reading GPU 0");
  std::this_thread::sleep_for(2ms);
  auto second = std::make_unique<DriverCallScope>("reading GPU 1");
  ASSERT_TRUE(OldestDriverCall().has_value());
  EXPECT_EQ(OldestDriverCall()->what, "reading GPU 0");
  first.reset();
  EXPECT_EQ(OldestDriverCall()->what, "reading GPU 1");
  second.reset();
  EXPECT_FALSE(OldestDriverCall().has_value());
}

TEST(DriverCalls, OnlyCallsThatBeganBeforeTheSignalHoldTheGuard) {
  const DriverCallScope before("NVML initialisation");
  std::this_thread::sleep_for(2ms);
  const std::uint64_t signalled = NowNanos();
  std::this_thread::sleep_for(2ms);
  const DriverCallScope after("reading GPU 3");
  char what[kDriverCallTextSize];
  const std::uint64_t since = OldestCallSince(signalled, what);
  ASSERT_NE(since, 0u);
  EXPECT_LT(since, signalled);
  EXPECT_STREQ(what, "NVML initialisation");
  // A signal before both: nothing holds the command up.
  EXPECT_EQ(OldestCallSince(since, what), 0u);
}

TEST(DriverCalls, ALongDescriptionIsCutAndEveryCallBeyondTheTableStillRuns) {
  const std::string long_text(300, 'x');
  const DriverCallScope call(long_text);
  EXPECT_EQ(OldestDriverCall()->what, std::string(kDriverCallTextSize - 1, 'x'));
  // More calls at once than the table holds: the extra ones go unreported,
  // and every slot is free again once they return.
  std::vector<std::unique_ptr<DriverCallScope>> many;
  for (int i = 0; i < 300; ++i) many.push_back(std::make_unique<DriverCallScope>("call"));
  EXPECT_EQ(OldestDriverCall()->what, std::string(kDriverCallTextSize - 1, 'x'));
  many.clear();
  for (int i = 0; i < 300; ++i) many.push_back(std::make_unique<DriverCallScope>("again"));
  EXPECT_EQ(OldestDriverCall()->what, std::string(kDriverCallTextSize - 1, 'x'));
}

TEST(DriverCalls, CallsFromManyThreadsAtOnceLeaveTheTableEmpty) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 2000; ++i) {
        const DriverCallScope call("reading GPU " + std::to_string(t));
        char what[kDriverCallTextSize];
        (void)OldestCallSince(~std::uint64_t{0} - 1, what);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_FALSE(OldestDriverCall().has_value());
}

TEST(DriverCalls, AHungCallIsDescribedWithItsAge) {
  const DriverCallScope call("reading GPU 0");
  EXPECT_FALSE(DescribeHungCall(10s).has_value());
  const auto text = DescribeHungCall(0ms);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, "reading GPU 0 has not returned for 0 s");
}

}  // namespace
}  // namespace gpuwatch
