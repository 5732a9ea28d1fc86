#include "analysis/leaks/robust_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace gpuwatch::leaks {
namespace {

std::vector<Point> Line(int n, double slope, double intercept = 100) {
  std::vector<Point> p;
  for (int i = 0; i < n; ++i) p.push_back({i * 60.0, intercept + slope * i * 60.0});
  return p;
}

TEST(TheilSen, RecoversTheSlopeDespiteOutliers) {
  auto p = Line(20, 2.0);
  p[3].value += 1e6;  // two wild points (an evaluation spike, a glitch)
  p[15].value -= 1e6;
  auto e = TheilSen(p);
  ASSERT_TRUE(e);
  EXPECT_NEAR(e->slope, 2.0, 1e-9);
}

TEST(TheilSen, ConfidenceIntervalBracketsTheSlope) {
  auto p = Line(30, 1.0);
  for (std::size_t i = 0; i < p.size(); ++i)
    p[i].value += 40 * std::sin(1.7 * static_cast<double>(i));
  auto e = TheilSen(p);
  ASSERT_TRUE(e);
  EXPECT_LE(e->low, e->slope);
  EXPECT_GE(e->high, e->slope);
  EXPECT_LT(e->low, 1.0);
  EXPECT_GT(e->high, 1.0);
}

TEST(TheilSen, NeedsTwoDistinctTimes) {
  std::vector<Point> p = {{5, 1}, {5, 2}};
  EXPECT_FALSE(TheilSen(p));
}

TEST(MannKendall, RisingSeriesIsSignificant) {
  auto t = MannKendall(Line(12, 1.0));
  EXPECT_EQ(t.s, 66);  // every one of the 12*11/2 pairs rises
  EXPECT_GT(t.z, 3.09);
  EXPECT_LT(t.p_upward, 0.001);
}

TEST(MannKendall, FallingSeriesIsNotUpward) {
  auto t = MannKendall(Line(12, -1.0));
  EXPECT_LT(t.z, 0);
  EXPECT_GT(t.p_upward, 0.99);
}

TEST(MannKendall, AllTiesGiveNoTrend) {
  auto t = MannKendall(Line(12, 0.0));
  EXPECT_EQ(t.s, 0);
  EXPECT_EQ(t.z, 0);
  EXPECT_EQ(t.p_upward, 1);
}

TEST(MannKendall, TiesShrinkTheVariance) {
  std::vector<Point> distinct = Line(10, 1.0);
  std::vector<Point> tied = distinct;
  for (std::size_t i = 0; i < tied.size(); ++i) tied[i].value = static_cast<double>(i / 2);
  EXPECT_LT(MannKendall(tied).variance, MannKendall(distinct).variance);
}

TEST(MannKendall, ToleranceTurnsSmallDifferencesIntoTies) {
  std::vector<Point> p = {{0, 10}, {1, 10.5}, {2, 11}, {3, 11.2}};
  EXPECT_GT(MannKendall(p).s, 0);
  EXPECT_EQ(MannKendall(p, 5).s, 0);
}

TEST(Median, OddAndEvenCounts) {
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(Median({}), 0);
}

}  // namespace
}  // namespace gpuwatch::leaks
