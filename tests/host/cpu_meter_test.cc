#include "host/cpu_meter.h"

#include <gtest/gtest.h>

namespace gpuwatch::host {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
const CpuMeter::Clock::time_point kT0 = CpuMeter::Clock::time_point{} + seconds(100);

TEST(CpuMeter, FirstSightIsTheAverageSinceStart) {
  CpuMeter m(100);
  // 50 s of CPU over 100 s of life.
  EXPECT_DOUBLE_EQ(*m.Update({1, 10}, 5000, kT0, 100.0), 0.5);
}

TEST(CpuMeter, FirstSightWithoutAgeIsUnknown) {
  CpuMeter m(100);
  EXPECT_FALSE(m.Update({1, 10}, 5000, kT0, std::nullopt).has_value());
  EXPECT_FALSE(m.Update({2, 10}, 5000, kT0, 0.0).has_value());
}

TEST(CpuMeter, LaterSightIsTheDeltaOverElapsedTime) {
  CpuMeter m(100);
  (void)m.Update({1, 10}, 5000, kT0, 100.0);
  // 3 s of CPU in 2 s: 1.5 cores.
  EXPECT_DOUBLE_EQ(*m.Update({1, 10}, 5300, kT0 + seconds(2), std::nullopt), 1.5);
}

TEST(CpuMeter, SameProcessTwiceInOneSampleKeepsItsRatio) {
  CpuMeter m(100);
  (void)m.Update({1, 10}, 5000, kT0, 100.0);
  EXPECT_DOUBLE_EQ(*m.Update({1, 10}, 5300, kT0 + seconds(2), std::nullopt), 1.5);
  EXPECT_DOUBLE_EQ(*m.Update({1, 10}, 5300, kT0 + seconds(2) + milliseconds(1), std::nullopt), 1.5);
}

TEST(CpuMeter, ReusedPidIsANewProcess) {
  CpuMeter m(100);
  (void)m.Update({1, 10}, 5000, kT0, 100.0);
  // Same pid, later start: its own since-start average, no delta from the old one.
  EXPECT_DOUBLE_EQ(*m.Update({1, 20}, 100, kT0 + seconds(2), 4.0), 0.25);
}

TEST(CpuMeter, EndSampleForgetsWhatWasNotUpdated) {
  CpuMeter m(100);
  (void)m.Update({1, 10}, 5000, kT0, 100.0);
  (void)m.Update({2, 10}, 5000, kT0, 100.0);
  m.EndSample();
  (void)m.Update({1, 10}, 5100, kT0 + seconds(1), std::nullopt);
  m.EndSample();
  EXPECT_TRUE(m.Has({1, 10}));
  EXPECT_FALSE(m.Has({2, 10}));
  EXPECT_EQ(m.size(), 1u);
}

}  // namespace
}  // namespace gpuwatch::host
