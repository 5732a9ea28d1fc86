#include "analysis/leaks/robust_stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

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

// Var(S) of Mann–Kendall's S under "no trend", corrected for ties.
double NoTrendVariance(std::span<const Point> points, double tie_tolerance) {
  const auto n = static_cast<double>(points.size());
  return (n * (n - 1) * (2 * n + 5) - TieTerm(points, tie_tolerance)) / 18;
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
  TrendTest r;
  if (points.size() < 2) return r;
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (std::size_t j = i + 1; j < points.size(); ++j) {
      const double d = points[j].value - points[i].value;
      if (d > tie_tolerance) r.s += 1;
      if (d < -tie_tolerance) r.s -= 1;
    }
  }
  r.variance = NoTrendVariance(points, tie_tolerance);
  if (r.variance <= 0) return r;
  const double sd = std::sqrt(r.variance);
  if (r.s > 0) r.z = (r.s - 1) / sd;
  if (r.s < 0) r.z = (r.s + 1) / sd;
  r.p_upward = 0.5 * std::erfc(r.z / std::sqrt(2.0));
  return r;
}

}  // namespace gpuwatch::leaks
