#include "analysis/leaks/robust_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
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

// S and its variance as the textbook counts them: every pair's sign, and the
// ties term from the sorted values' groups.
TrendTest CountedMannKendall(std::span<const Point> p) {
  TrendTest t;
  const auto n = static_cast<double>(p.size());
  if (p.size() < 2) return t;
  for (std::size_t i = 0; i < p.size(); ++i) {
    for (std::size_t j = i + 1; j < p.size(); ++j) {
      const double d = p[j].value - p[i].value;
      t.s += d > 0 ? 1 : d < 0 ? -1 : 0;
    }
  }
  std::vector<double> v;
  for (const Point& x : p) v.push_back(x.value);
  std::sort(v.begin(), v.end());
  double ties = 0;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j < v.size() && v[j] == v[i]) ++j;
    const auto g = static_cast<double>(j - i);
    ties += g * (g - 1) * (2 * g + 5);
    i = j;
  }
  t.variance = (n * (n - 1) * (2 * n + 5) - ties) / 18;
  if (t.variance > 0) {
    const double sd = std::sqrt(t.variance);
    t.z = t.s > 0 ? (t.s - 1) / sd : t.s < 0 ? (t.s + 1) / sd : 0;
    t.p_upward = 0.5 * std::erfc(t.z / std::sqrt(2.0));
  }
  return t;
}

// One pass over the pairs gives every suffix's test: the same S, variance, z
// and p as counting each suffix on its own, with noise, many ties and all
// equal values.
TEST(MannKendall, SuffixesFromOnePassMatchCountingEachSpan) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> noise(-1, 1);
  std::uniform_int_distribution<int> level(0, 3);
  for (int shape = 0; shape < 3; ++shape) {
    std::vector<Point> p;
    for (int i = 0; i < 70; ++i) {
      const double v = shape == 0   ? 1e9 + 1e6 * noise(rng) + 2e4 * i
                       : shape == 1 ? static_cast<double>(level(rng))
                                    : 5.0;
      p.push_back({i * 5.0, v});
    }
    std::vector<std::size_t> lengths;
    for (std::size_t k = 0; k <= p.size() + 2; ++k) lengths.push_back(k);
    const auto got = MannKendallOfSuffixes(p, lengths);
    ASSERT_EQ(got.size(), lengths.size());
    for (std::size_t k = 0; k < lengths.size(); ++k) {
      const auto span = std::span<const Point>(p).last(std::min(k, p.size()));
      const TrendTest want = CountedMannKendall(span);
      EXPECT_EQ(got[k].s, want.s) << "shape " << shape << " k " << k;
      EXPECT_EQ(got[k].variance, want.variance) << "shape " << shape << " k " << k;
      EXPECT_EQ(got[k].z, want.z) << "shape " << shape << " k " << k;
      EXPECT_EQ(got[k].p_upward, want.p_upward) << "shape " << shape << " k " << k;
      const TrendTest alone = MannKendall(span);
      EXPECT_EQ(alone.s, want.s);
      EXPECT_EQ(alone.variance, want.variance);
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
