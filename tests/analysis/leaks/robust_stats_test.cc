#include "analysis/leaks/robust_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
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

// The slope and Sen's interval as the textbook computes them: every pairwise
// slope sorted, then read at the median and at the ranks (N -+ C) / 2.
SlopeEstimate SortedTheilSen(const std::vector<Point>& points, double z) {
  std::vector<double> slopes;
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (std::size_t j = i + 1; j < points.size(); ++j) {
      const double dt = points[j].t_s - points[i].t_s;
      if (dt > 0) slopes.push_back((points[j].value - points[i].value) / dt);
    }
  }
  std::sort(slopes.begin(), slopes.end());
  const auto n = static_cast<double>(slopes.size());
  const std::size_t mid = slopes.size() / 2;
  const double c = z * std::sqrt(MannKendall(points).variance);
  SlopeEstimate e;
  e.slope = slopes.size() % 2 == 1 ? slopes[mid] : (slopes[mid - 1] + slopes[mid]) / 2;
  e.low = slopes[static_cast<std::size_t>(std::clamp(std::floor((n - c) / 2), 1.0, n)) - 1];
  e.high = slopes[static_cast<std::size_t>(std::clamp(std::ceil((n + c) / 2) + 1, 1.0, n)) - 1];
  return e;
}

// TheilSen reads only the order statistics it needs: the same numbers as the
// full sort, on noise, on ties, on repeated times, odd and even pair counts.
TEST(TheilSen, SelectsTheSameOrderStatisticsAsAFullSort) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(-1, 1);
  std::uniform_int_distribution<int> level(0, 3);
  for (int n = 2; n <= 80; ++n) {
    for (int shape = 0; shape < 3; ++shape) {
      if (shape == 2 && n < 3) continue;  // one time only: no slope (NeedsTwoDistinctTimes)
      std::vector<Point> p;
      for (int i = 0; i < n; ++i) {
        const double t = shape == 2 ? static_cast<double>(i / 2) : i * 5.0;  // pairs of equal times
        const double v = shape == 1 ? static_cast<double>(level(rng))        // many ties
                                    : 1e9 + 3e3 * i + 1e6 * noise(rng);
        p.push_back({t, v});
      }
      for (double z : {1.96, 0.5, 4.0}) {
        const auto got = TheilSen(p, z);
        ASSERT_TRUE(got) << n;
        const SlopeEstimate want = SortedTheilSen(p, z);
        EXPECT_EQ(got->slope, want.slope) << "n " << n << " shape " << shape << " z " << z;
        EXPECT_EQ(got->low, want.low) << "n " << n << " shape " << shape << " z " << z;
        EXPECT_EQ(got->high, want.high) << "n " << n << " shape " << shape << " z " << z;
      }
    }
  }
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
