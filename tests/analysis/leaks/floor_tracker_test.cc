#include "analysis/leaks/floor_tracker.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/leaks/leak_detector.h"

namespace gpuwatch::leaks {
namespace {

// A training sawtooth: low + (high - low) * phase, period 90 s.
double Saw(double t, double low, double high) {
  const double phase = std::fmod(t, 90.0) / 90.0;
  return low + (high - low) * phase;
}

TEST(FloorTracker, FollowsTheMinimumOfEachWindowNotTheSawtooth) {
  FloorTracker f(300, 64);
  for (double t = 0; t <= 3600; t += 10) f.Add(t, Saw(t, 20 * kGiB, 26 * kGiB));
  ASSERT_EQ(f.points().size(), 12u);
  for (const Point& p : f.points()) EXPECT_NEAR(p.value, 20 * kGiB, 0.1 * kGiB);
  EXPECT_DOUBLE_EQ(f.points().front().t_s, 0);  // when the first window's minimum was seen
  EXPECT_DOUBLE_EQ(f.points()[1].t_s, 360);     // the bottom of the sawtooth in [300, 600)
}

TEST(FloorTracker, IgnoresASpikeShorterThanTheWindow) {
  FloorTracker f(300, 64);
  for (double t = 0; t <= 1800; t += 10) {
    const bool spike = t >= 600 && t < 660;
    f.Add(t, (spike ? 48 : 40) * kGiB);
  }
  for (const Point& p : f.points()) EXPECT_EQ(p.value, 40 * kGiB);
}

TEST(FloorTracker, AddReportsWhenAWindowCloses) {
  FloorTracker f(60, 16);
  EXPECT_FALSE(f.Add(0, 1));
  EXPECT_FALSE(f.Add(30, 2));
  EXPECT_TRUE(f.Add(60, 3));
  EXPECT_EQ(f.points().back().value, 1);
}

TEST(FloorTracker, SkipsEmptyWindowsAfterAGap) {
  FloorTracker f(60, 16);
  f.Add(0, 5);
  f.Add(1000, 7);  // 16 windows later
  f.Add(1090, 9);  // closes the window that holds t = 1000
  ASSERT_EQ(f.points().size(), 2u);
  EXPECT_DOUBLE_EQ(f.points()[1].t_s, 1000);  // its only sample
  EXPECT_EQ(f.points()[1].value, 7);
}

TEST(FloorTracker, PeakCoversTheLastClosedAndTheOpenWindow) {
  FloorTracker f(60, 16);
  EXPECT_FALSE(f.peak());
  f.Add(0, 10);
  f.Add(30, 50);
  f.Add(60, 20);  // closes [0, 60) whose max is 50
  EXPECT_EQ(*f.peak(), 50);
  f.Add(120, 30);  // closes [60, 120): its max 20 replaces 50
  EXPECT_EQ(*f.peak(), 30);
}

TEST(FloorTracker, HistoryStaysBoundedForDays) {
  FloorTracker f(300, 64);
  for (double t = 0; t <= 7 * 86400; t += 30) f.Add(t, 1e9 + t);  // a week at 30 s
  EXPECT_LE(f.points().size(), 65u);
  for (std::size_t i = 1; i < f.points().size(); ++i) {
    EXPECT_LT(f.points()[i - 1].t_s, f.points()[i].t_s);
  }
  // The newest points keep full resolution.
  EXPECT_DOUBLE_EQ(f.points().back().t_s - f.points()[f.points().size() - 2].t_s, 300);
}

TEST(FloorTracker, MergingKeepsTheLevelOfAFlatSawtooth) {
  // Merged points average the minima: a flat sawtooth must not look like
  // growth between old (merged) and new points.
  FloorTracker f(300, 16);
  for (double t = 0; t <= 86400; t += 10) f.Add(t, Saw(t * 1.37, 20 * kGiB, 26 * kGiB));
  double lo = 1e300, hi = 0;
  for (const Point& p : f.points()) {
    lo = std::min(lo, p.value);
    hi = std::max(hi, p.value);
  }
  EXPECT_LT(hi - lo, 0.5 * kGiB);
}

}  // namespace
}  // namespace gpuwatch::leaks
