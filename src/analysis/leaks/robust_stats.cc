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
  std::sort(slopes.begin(), slopes.end());
  const auto n = static_cast<double>(slopes.size());
  SlopeEstimate e;
  const std::size_t mid = slopes.size() / 2;
  e.slope = slopes.size() % 2 == 1 ? slopes[mid] : (slopes[mid - 1] + slopes[mid]) / 2;
  // Sen (1968): the interval runs between the order statistics (N -+ C) / 2,
  // C = z * sqrt(Var S).
  const double c = z * std::sqrt(MannKendall(points).variance);
  const double lo_rank = std::clamp(std::floor((n - c) / 2), 1.0, n);
  const double hi_rank = std::clamp(std::ceil((n + c) / 2) + 1, 1.0, n);
  e.low = slopes[static_cast<std::size_t>(lo_rank) - 1];
  e.high = slopes[static_cast<std::size_t>(hi_rank) - 1];
  return e;
}

TrendTest MannKendall(std::span<const Point> points, double tie_tolerance) {
  TrendTest r;
  const auto n = static_cast<double>(points.size());
  if (points.size() < 2) return r;
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (std::size_t j = i + 1; j < points.size(); ++j) {
      const double d = points[j].value - points[i].value;
      if (d > tie_tolerance) r.s += 1;
      if (d < -tie_tolerance) r.s -= 1;
    }
  }
  r.variance = (n * (n - 1) * (2 * n + 5) - TieTerm(points, tie_tolerance)) / 18;
  if (r.variance <= 0) return r;
  const double sd = std::sqrt(r.variance);
  if (r.s > 0) r.z = (r.s - 1) / sd;
  if (r.s < 0) r.z = (r.s + 1) / sd;
  r.p_upward = 0.5 * std::erfc(r.z / std::sqrt(2.0));
  return r;
}

}  // namespace gpuwatch::leaks
