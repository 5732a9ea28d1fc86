#include "analysis/leaks/leak_detector.h"

#include <algorithm>
#include <span>
#include <vector>

namespace gpuwatch::leaks {
namespace {

double Seconds(std::chrono::seconds s) { return static_cast<double>(s.count()); }

// The floor points whose time is within `lookback_s` of the newest one.
std::span<const Point> Recent(const std::vector<Point>& points, double lookback_s) {
  if (points.empty()) return {};
  const double from = points.back().t_s - lookback_s;
  auto first = std::lower_bound(points.begin(), points.end(), from,
                                [](const Point& p, double t) { return p.t_s < t; });
  return {first, points.end()};
}

}  // namespace

LeakOptions ScaledLeakOptions(std::chrono::seconds floor_window) {
  LeakOptions o;
  o.floor_window = floor_window;
  o.grace = floor_window;
  o.min_span = floor_window * 8;
  o.max_lookback = floor_window * 64;
  o.clear_after = floor_window * 12;
  return o;
}

LeakDetector::LeakDetector(const LeakOptions& options)
    : options_(options), floor_(Seconds(options.floor_window), options.history_points) {}

LeakChange LeakDetector::Observe(std::chrono::system_clock::time_point time, double bytes) {
  if (!origin_) origin_ = time;
  const double t_s = std::chrono::duration<double>(time - *origin_).count();
  estimate_.last_bytes = bytes;
  if (t_s < Seconds(options_.grace)) return LeakChange::kNone;
  const bool closed = floor_.Add(t_s, bytes);
  estimate_.peak_bytes = floor_.peak().value_or(bytes);
  if (!closed) return LeakChange::kNone;
  return Decide();
}

// Tests the floor points of the last `lookback_s` (covering at least min_span).
std::optional<LeakDetector::WindowResult> LeakDetector::TestWindow(double lookback_s) const {
  const std::vector<Point> all(floor_.points().begin(), floor_.points().end());
  // Points are window middles: n points cover (last - first) + one window.
  const double window_s = floor_.window_s();
  const std::span<const Point> points = Recent(all, lookback_s - window_s);
  if (points.size() < 4) return std::nullopt;
  const double covered_s = points.back().t_s - points.front().t_s + window_s;
  if (covered_s + 1e-6 < Seconds(options_.min_span)) return std::nullopt;

  const auto slope = TheilSen(points);
  if (!slope) return std::nullopt;
  const TrendTest trend = MannKendall(points);
  const double middle_s = (points.front().t_s + points.back().t_s) / 2;
  const std::span<const Point> newer = Recent(all, points.back().t_s - middle_s);
  const auto newer_slope = TheilSen(newer);

  WindowResult r;
  LeakEstimate& e = r.estimate;
  e.enough_evidence = true;
  e.rate_bytes_per_s = slope->slope;
  e.rate_low_bytes_per_s = slope->low;
  e.rate_high_bytes_per_s = slope->high;
  e.confidence = 1 - trend.p_upward;
  e.window = std::chrono::seconds(static_cast<long long>(covered_s));
  e.points = points.size();
  const double min_rate = options_.min_rate_bytes_per_s;
  e.growing = slope->slope >= min_rate && trend.z >= options_.z_critical;
  r.shows_leak =
      e.growing && newer_slope &&
      newer_slope->slope >= std::max(min_rate, options_.newer_half_share * e.rate_bytes_per_s) &&
      MannKendall(newer).z >= options_.z_newer_half;
  return r;
}

// The floor of the last `span_s` exists over that whole span and its slope is
// below min_rate.
bool LeakDetector::FlatFor(double span_s) const {
  const std::vector<Point> all(floor_.points().begin(), floor_.points().end());
  const double window_s = floor_.window_s();
  const std::span<const Point> points = Recent(all, span_s - window_s);
  if (points.size() < 2) return false;
  if (points.back().t_s - points.front().t_s + window_s + 1e-6 < span_s) return false;
  const auto slope = TheilSen(points);
  return slope && slope->slope < options_.min_rate_bytes_per_s;
}

LeakChange LeakDetector::Decide() {
  std::optional<WindowResult> shortest_leak;
  std::optional<WindowResult> longest;
  const double max_s = std::max(Seconds(options_.max_lookback), Seconds(options_.min_span));
  for (double lookback_s = Seconds(options_.min_span); lookback_s <= max_s + 1e-6;
       lookback_s *= 2) {
    auto r = TestWindow(lookback_s);
    if (!r) break;  // longer windows have no more points than this one
    if (r->shows_leak && !shortest_leak) shortest_leak = r;
    const bool same_points = longest && longest->estimate.points == r->estimate.points;
    longest = std::move(r);
    if (same_points) break;
  }

  const bool was = estimate_.suspected;
  const LeakEstimate& chosen =
      shortest_leak ? shortest_leak->estimate : (longest ? longest->estimate : LeakEstimate{});
  const double last = estimate_.last_bytes;
  const double peak = estimate_.peak_bytes;
  estimate_ = chosen;
  estimate_.last_bytes = last;
  estimate_.peak_bytes = peak;
  estimate_.floor_bytes = floor_.points().back().value;

  if (!was) {
    estimate_.suspected = shortest_leak.has_value();
    return estimate_.suspected ? LeakChange::kSuspected : LeakChange::kNone;
  }
  const bool clear = !shortest_leak && FlatFor(Seconds(options_.clear_after));
  estimate_.suspected = !clear;
  return clear ? LeakChange::kCleared : LeakChange::kNone;
}

}  // namespace gpuwatch::leaks
