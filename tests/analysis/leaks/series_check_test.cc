// SeriesCheck: a framework's allocated bytes judged per training step.
#include "analysis/leaks/series_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

namespace gpuwatch::leaks {
namespace {

// A loop's activations by iteration: up `height` over `period` iterations, then freed.
double IterationTooth(double i, double height, double period) {
  return height * std::fmod(i, period) / period;
}

TEST(SeriesCheck, FindsASteadyGrowthPerIterationUnderALoopSawtooth) {
  std::vector<Point> points;
  for (int i = 0; i < 300; ++i) {
    points.push_back(
        Point{static_cast<double>(i), 2 * kGiB + 8 * kMiB * i + IterationTooth(i, kGiB, 3)});
  }
  const SeriesCheck c = CheckSeries(points, 1024);
  EXPECT_TRUE(c.leak);
  EXPECT_NEAR(c.estimate.rate_bytes_per_s, 8 * kMiB, 0.5 * kMiB);
}

TEST(SeriesCheck, FindsASmallLeakUnderALoopWhosePeriodTheWindowDoesNotDivide) {
  // 100 iterations: 1 MiB kept each, under 7-iteration teeth of 1.8 GiB. The
  // window (6 iterations) misses a tooth's bottom now and then, so its floor
  // jitters by more than the series grows; the verdict still comes.
  std::vector<Point> leak, flat;
  for (int i = 0; i < 100; ++i) {
    const double tooth = (i % 7) * 300 * kMiB;
    leak.push_back(Point{static_cast<double>(i), 2 * kGiB + tooth + kMiB * i});
    flat.push_back(Point{static_cast<double>(i), 2 * kGiB + tooth});
  }
  const SeriesCheck c = CheckSeries(leak, 1024);
  EXPECT_TRUE(c.leak);
  EXPECT_NEAR(c.estimate.rate_bytes_per_s, kMiB, 0.2 * kMiB);
  EXPECT_FALSE(CheckSeries(flat, 1024).leak);
}

TEST(SeriesCheck, AFlatSeriesAndAWarmUpAreNoLeak) {
  std::vector<Point> flat, warm;
  for (int i = 0; i < 200; ++i) {
    flat.push_back(Point{static_cast<double>(i), 2 * kGiB + IterationTooth(i, kGiB, 3)});
    warm.push_back(Point{static_cast<double>(i), 2 * kGiB + 8 * kMiB * std::min(i, 40)});
  }
  EXPECT_FALSE(CheckSeries(flat, 1024).leak);
  EXPECT_FALSE(CheckSeries(warm, 1024).leak);
  EXPECT_FALSE(CheckSeries(std::span<const Point>(flat).first(15), 1024).enough_evidence);
}

}  // namespace
}  // namespace gpuwatch::leaks
