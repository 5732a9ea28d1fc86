#include "analysis/leaks/robust_stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace gpuwatch::leaks {
namespace {

// Var(S) ties term: sum over groups of tied values of t(t-1)(2t+5).
double TieTerm(std::span<const Point> points, double tie_tolerance) {
  std::vector<double> v;
  v.reserve(points.size());
  for (const Point& p : points) v.push_back(p.value);
  std::sort(v.begin(), v.end());
  double term = 0;
  std::size_t i = 0;
  while (i < v.size()) {
    std::size_t j = i + 1;
    while (j < v.size() && v[j] - v[i] <= tie_tolerance) ++j;
    const auto t = static_cast<double>(j - i);
    term += t * (t - 1) * (2 * t + 5);
    i = j;
  }
  return term;
}

// Var(S) of Mann–Kendall's S under "no trend" for `count` points, given the
// ties term.
double NoTrendVariance(std::size_t count, double tie_term) {
  const auto n = static_cast<double>(count);
  return (n * (n - 1) * (2 * n + 5) - tie_term) / 18;
}

double NoTrendVariance(std::span<const Point> points, double tie_tolerance) {
  return NoTrendVariance(points.size(), TieTerm(points, tie_tolerance));
}

// The test from S and its variance.
TrendTest TrendOf(double s, double variance) {
  TrendTest r;
  r.s = s;
  r.variance = variance;
  if (r.variance <= 0) return r;
  const double sd = std::sqrt(r.variance);
  if (r.s > 0) r.z = (r.s - 1) / sd;
  if (r.s < 0) r.z = (r.s + 1) / sd;
  r.p_upward = 0.5 * std::erfc(r.z / std::sqrt(2.0));
  return r;
}

// For each point i, over the pairs (i, j > i): the sum of their signs (+1
// where j's value is above i's, -1 below) and a share of the exact ties term.
// A group of t equal values adds t(t-1)(2t+5) to that term, which is the sum,
// over its members, of 6(c² + 2c) where c is how many later members equal
// it. Both belong to every suffix of the points that holds i, so one pass
// over the pairs serves every suffix.
struct PairSums {
  std::vector<std::int64_t> sign;
  std::vector<double> ties;
};
PairSums SumPairs(std::span<const Point> points) {
  const std::size_t n = points.size();
  std::vector<double> v(n);
  for (std::size_t k = 0; k < n; ++k) v[k] = points[k].value;
  PairSums sums{std::vector<std::int64_t>(n), std::vector<double>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t sign = 0, equal = 0;
    for (std::size_t j = i + 1; j < n; ++j) {  // branch-free: the values are noise
      sign += static_cast<std::int64_t>(v[j] > v[i]) - static_cast<std::int64_t>(v[j] < v[i]);
      equal += static_cast<std::int64_t>(v[j] == v[i]);
    }
    sums.sign[i] = sign;
    sums.ties[i] = static_cast<double>(6 * (equal * equal + 2 * equal));
  }
  return sums;
}

// Puts at each of `ranks` (ascending, distinct, each < v.size()) the value a
// full sort would put there: one partial selection per rank, each over what
// the one before left to its right (O(size) each, where sorting the few
// thousand pairwise slopes of a span is O(size log size)).
void PlaceRanks(std::vector<double>& v, std::span<const std::size_t> ranks) {
  std::size_t from = 0;
  for (std::size_t rank : ranks) {
    std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(from),
                     v.begin() + static_cast<std::ptrdiff_t>(rank), v.end());
    from = rank + 1;
  }
}

}  // namespace

std::optional<double> LeastSquaresSlope(std::span<const Point> points) {
  if (points.size() < 2) return std::nullopt;
  double mt = 0, mv = 0;
  for (const Point& p : points) {
    mt += p.t_s;
    mv += p.value;
  }
  mt /= static_cast<double>(points.size());
  mv /= static_cast<double>(points.size());
  double stt = 0, stv = 0;
  for (const Point& p : points) {
    stt += (p.t_s - mt) * (p.t_s - mt);
    stv += (p.t_s - mt) * (p.value - mv);
  }
  if (!(stt > 0)) return std::nullopt;
  return stv / stt;
}

Residuals ResidualsAbout(std::span<const Point> points, double slope) {
  Residuals r;
  r.sorted.reserve(points.size());
  for (const Point& p : points) r.sorted.push_back(p.value - slope * p.t_s);
  std::sort(r.sorted.begin(), r.sorted.end());
  return r;
}

double Residuals::Quantile(double q) const {
  return sorted[static_cast<std::size_t>(std::lround(q * static_cast<double>(sorted.size() - 1)))];
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

std::optional<SlopeEstimate> TheilSen(std::span<const Point> points, double z) {
  std::vector<double> slopes;
  slopes.reserve(points.size() * (points.size() - (points.empty() ? 0 : 1)) / 2);
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (std::size_t j = i + 1; j < points.size(); ++j) {
      const double dt = points[j].t_s - points[i].t_s;
      if (dt > 0) slopes.push_back((points[j].value - points[i].value) / dt);
    }
  }
  if (slopes.empty()) return std::nullopt;
  const auto n = static_cast<double>(slopes.size());
  const std::size_t mid = slopes.size() / 2;
  // Sen (1968): the interval runs between the order statistics (N -+ C) / 2,
  // C = z * sqrt(Var S).
  const double c = z * std::sqrt(std::max(0.0, NoTrendVariance(points, 0)));
  const auto lo = static_cast<std::size_t>(std::clamp(std::floor((n - c) / 2), 1.0, n)) - 1;
  const auto hi = static_cast<std::size_t>(std::clamp(std::ceil((n + c) / 2) + 1, 1.0, n)) - 1;
  // Only these order statistics are read: select them rather than sort.
  std::vector<std::size_t> ranks = {lo, mid, hi};
  if (slopes.size() % 2 == 0) ranks.push_back(mid - 1);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  PlaceRanks(slopes, ranks);
  SlopeEstimate e;
  e.slope = slopes.size() % 2 == 1 ? slopes[mid] : (slopes[mid - 1] + slopes[mid]) / 2;
  e.low = slopes[lo];
  e.high = slopes[hi];
  return e;
}

TrendTest MannKendall(std::span<const Point> points, double tie_tolerance) {
  if (points.size() < 2) return TrendTest{};
  if (tie_tolerance == 0) {
    const std::size_t all[] = {points.size()};
    return MannKendallOfSuffixes(points, all).front();
  }
  double s = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (std::size_t j = i + 1; j < points.size(); ++j) {
      const double d = points[j].value - points[i].value;
      if (d > tie_tolerance) s += 1;
      if (d < -tie_tolerance) s -= 1;
    }
  }
  return TrendOf(s, NoTrendVariance(points, tie_tolerance));
}

std::vector<TrendTest> MannKendallOfSuffixes(std::span<const Point> points,
                                             std::span<const std::size_t> lengths) {
  // Only the pairs within the longest suffix asked for.
  const std::size_t longest =
      lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
  points = points.last(std::min(longest, points.size()));
  const std::size_t n = points.size();
  const PairSums sums = SumPairs(points);
  // Suffix sums: S and the ties term of the last k points, k = 0..n.
  std::vector<std::int64_t> s(n + 1, 0);
  std::vector<double> ties(n + 1, 0);
  for (std::size_t k = 1; k <= n; ++k) {
    s[k] = s[k - 1] + sums.sign[n - k];
    ties[k] = ties[k - 1] + sums.ties[n - k];
  }
  std::vector<TrendTest> out;
  out.reserve(lengths.size());
  for (std::size_t k : lengths) {
    k = std::min(k, n);
    out.push_back(k < 2 ? TrendTest{}
                        : TrendOf(static_cast<double>(s[k]), NoTrendVariance(k, ties[k])));
  }
  return out;
}

}  // namespace gpuwatch::leaks
