#include "analysis/leaks/forecast.h"

#include <gtest/gtest.h>

#include "analysis/leaks/leak_detector.h"

namespace gpuwatch::leaks {
namespace {

TEST(TimeToFull, IsHeadroomOverGrowthRate) {
  // 100 GiB left at 400 MiB/min: 256 min.
  auto t = TimeToFull(140 * kGiB, 40 * kGiB, 400 * kMiB / 60);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->count(), 256 * 60);
}

TEST(TimeToFull, NoForecastWithoutGrowth) {
  EXPECT_FALSE(TimeToFull(140 * kGiB, 40 * kGiB, 0));
  EXPECT_FALSE(TimeToFull(140 * kGiB, 40 * kGiB, -1));
}

TEST(TimeToFull, ZeroWhenAlreadyFull) {
  auto t = TimeToFull(80 * kGiB, 81 * kGiB, kMiB);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->count(), 0);
}

TEST(Format, SizesRatesAndDurationsForPeople) {
  EXPECT_EQ(FormatBytes(31.2 * kGiB), "31.2 GiB");
  EXPECT_EQ(FormatBytes(512 * kMiB), "512 MiB");
  EXPECT_EQ(FormatRate(398 * kMiB / 60), "398 MiB/min");
  EXPECT_EQ(FormatRate(0.8 * kMiB / 60), "0.8 MiB/min");
  EXPECT_EQ(FormatDuration(std::chrono::seconds(4 * 3600 + 10 * 60 + 5)), "~4 h 10 min");
  EXPECT_EQ(FormatDuration(std::chrono::seconds(25 * 60)), "~25 min");
  EXPECT_EQ(FormatDuration(std::chrono::seconds(2 * 86400 + 3 * 3600)), "~2 d 3 h");
  EXPECT_EQ(FormatDuration(std::chrono::seconds(40)), "~40 s");
}

}  // namespace
}  // namespace gpuwatch::leaks
