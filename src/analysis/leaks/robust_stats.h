// Robust trend statistics over a short series of (time, value) points: the
// Theil–Sen slope with Sen's confidence interval, and the Mann–Kendall trend
// test. Pure functions; points must be sorted by time. O(n²) in the number of
// points, meant for the few hundred floor points a leak detector keeps.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace gpuwatch::leaks {

struct Point {
  double t_s = 0;    // seconds since an origin the caller chooses
  double value = 0;  // bytes, or any unit: slopes come out in value units per second
};

struct SlopeEstimate {
  double slope = 0;  // median of the pairwise slopes, value units per second
  double low = 0;    // Sen's ~95 % confidence interval (z = 1.96 by default)
  double high = 0;
};

// Theil–Sen slope. Pairs with equal times are skipped; nullopt when no pair
// has two distinct times.
std::optional<SlopeEstimate> TheilSen(std::span<const Point> points, double z = 1.96);

struct TrendTest {
  double s = 0;         // Mann–Kendall S: concordant minus discordant pairs
  double variance = 0;  // Var(S) under "no trend", corrected for ties
  double z = 0;         // continuity-corrected normal score
  double p_upward = 1;  // one-sided p-value of "the values increase with time"
};

// Mann–Kendall test for a monotonic upward trend. Values equal within
// `tie_tolerance` count as ties (neither up nor down).
TrendTest MannKendall(std::span<const Point> points, double tie_tolerance = 0);

// MannKendall (exact ties) of the last k points for each k of `lengths`
// (clamped to the points), all from one pass over the pairs: what testing
// several spans that end at the newest point costs once.
std::vector<TrendTest> MannKendallOfSuffixes(std::span<const Point> points,
                                             std::span<const std::size_t> lengths);

// Ordinary least-squares slope; nullopt without two distinct times.
std::optional<double> LeastSquaresSlope(std::span<const Point> points);

// The points' residuals about a line of `slope` through the origin (value -
// slope × t), sorted: where the line sits among them, and how far they spread.
struct Residuals {
  std::vector<double> sorted;  // not empty unless the points were
  // The q-quantile (0..1), the nearest rank.
  double Quantile(double q) const;
  // From the 10th to the 90th percentile: the jitter about the line.
  double Spread() const { return Quantile(0.9) - Quantile(0.1); }
};
Residuals ResidualsAbout(std::span<const Point> points, double slope);

// Median of the values (copy made); 0 for an empty input.
double Median(std::vector<double> values);

}  // namespace gpuwatch::leaks
