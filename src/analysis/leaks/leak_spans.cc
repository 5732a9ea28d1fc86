// What a detector's floors say: the spans of each scale tested for growth
// (TestSpans), and whether the newest floor still rises, has been flat long
// enough, or fell back below the tooth a forecast was raised on. The
// decisions made from them are in leak_detector.cc.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "analysis/leaks/leak_detector.h"
#include "analysis/leaks/period_stop.h"
#include "analysis/leaks/robust_stats.h"

namespace gpuwatch::leaks {
namespace {

// Decisions in a row (one a base window) that must see growth stop before it
// counts as stopped, where each brings a new floor point to judge by.
constexpr int kStopDecisions = 3;

}  // namespace

// A period is regular when each of its recent intervals is within this share
// of their median, and matched moment by moment when it holds this many
// samples; the samples of this many periods (and a stop span) are kept.
const double LeakDetector::kPhaseTolerance = 0.05;
const double LeakDetector::kPhaseSamples = 10;
const double LeakDetector::kPhaseKeep = 1 + kPhaseTolerance;

namespace {

// The floor points whose time is within `lookback_s` of the newest one.
std::span<const Point> Recent(const std::vector<Point>& points, double lookback_s) {
  if (points.empty()) return {};
  const double from = points.back().t_s - lookback_s;
  auto first = std::lower_bound(points.begin(), points.end(), from,
                                [](const Point& p, double t) { return p.t_s < t; });
  return {first, points.end()};
}

// Rises on its own: slope at least `min_slope` and Mann–Kendall z >= `z`.
// `slope` gets the Theil–Sen slope when there is one.
bool Rises(std::span<const Point> points, double min_slope, double z, double& slope) {
  const auto s = TheilSen(points);
  if (!s) return false;
  slope = s->slope;
  return s->slope >= min_slope && MannKendall(points).z >= z;
}

// The span's rise along the Theil–Sen line over the spread of its points
// about that line (the 10th to the 90th percentile of the residuals): how
// far the growth stands out of the floor's jitter, whatever the test
// statistics say (many spans are tested at every decision).
double RiseOverSpread(std::span<const Point> points, double slope) {
  const double spread = ResidualsAbout(points, slope).Spread();
  const double rise = slope * (points.back().t_s - points.front().t_s);
  return spread > 0 ? rise / spread : std::numeric_limits<double>::infinity();
}

// The time a span of floor points of `window_s` windows covers.
double Covered(std::span<const Point> points, double window_s) {
  return points.back().t_s - points.front().t_s + window_s;
}

}  // namespace

std::vector<LeakDetector::SpanResult> LeakDetector::TestSpans(const Scale& scale) const {
  const std::vector<Point>& all = scale.floor.points();
  const double w = scale.floor.window_s();
  const double step = std::max(1.1, options_.span_step);
  std::vector<std::size_t> lengths;
  for (double windows = options_.min_windows; windows <= options_.max_windows + kEpsilon;
       windows *= step) {
    const auto n = static_cast<std::size_t>(std::lround(windows));
    if (!lengths.empty() && n == lengths.back()) continue;
    if (n > all.size()) break;  // longer spans have no more points than this one
    lengths.push_back(n);
  }
  // Every span ends at the newest point: one pass over the pairs tests them all.
  const std::vector<TrendTest> trends = MannKendallOfSuffixes(all, lengths);
  std::vector<SpanResult> out;
  for (std::size_t k = 0; k < lengths.size(); ++k) {
    const std::size_t n = lengths[k];
    const auto points = std::span<const Point>(all).last(n);
    // A span without an upward trend counts for its length only: its slope,
    // the dearest part of a test, is computed only if Decide shows it
    // (WithSlope).
    if (trends[k].z < options_.z_critical) {
      SpanResult r;
      r.span_s = Covered(points, w);
      r.points = static_cast<std::uint32_t>(n);
      out.push_back(r);
      continue;
    }
    out.push_back(TestSpan(points, w));
  }
  return out;
}

// A scale's results are those of its current floor points (every window it
// closes tests them again), so a span left untested is its last `points`.
const LeakDetector::SpanResult& LeakDetector::WithSlope(const Scale& scale, SpanResult& r) const {
  if (!r.estimated && r.points > 0) {
    r = TestSpan(std::span<const Point>(scale.floor.points()).last(r.points),
                 scale.floor.window_s());
  }
  return r;
}

// Tests the newest floor points: one a window, so a span of n windows is the
// last n points (counted, not cut by time: the time of a point is when its
// window's minimum was seen, which jitters by up to a window).
LeakDetector::SpanResult LeakDetector::TestSpan(std::span<const Point> points, double w) const {
  const double covered_s = Covered(points, w);
  SpanResult r;
  r.span_s = covered_s;
  const auto slope = TheilSen(points);
  if (!slope) return r;
  const TrendTest trend = MannKendall(points);
  r.estimated = true;
  r.rate_bytes_per_s = slope->slope;
  r.rate_low_bytes_per_s = slope->low;
  r.rate_high_bytes_per_s = slope->high;
  r.confidence = 1 - trend.p_upward;
  r.points = static_cast<std::uint32_t>(points.size());
  r.floor_bytes = points.back().value;
  const double min_rate = options_.min_rate_bytes_per_s;
  if (slope->slope < min_rate || trend.z < options_.z_critical) return r;
  const double share = std::max(min_rate, options_.half_share * slope->slope);
  const std::size_t half = points.size() / 2;
  const std::size_t quarter = std::max<std::size_t>(2, points.size() / 4);
  const auto newest = TheilSen(points.subspan(points.size() - quarter));
  double older_slope = 0, newer_slope = 0;
  r.sustained = Rises(points.first(half), share, options_.z_half, older_slope) &&
                Rises(points.subspan(half), share, options_.z_half, newer_slope) && newest &&
                newest->slope >= options_.half_share * slope->slope;
  // Grew at one rate throughout: its halves agree, by least squares (which,
  // unlike Theil–Sen, sees a minority of faster points: a change of rate).
  const auto older_ls = LeastSquaresSlope(points.first(half));
  const auto newer_ls = LeastSquaresSlope(points.subspan(half));
  const bool both_grow = r.sustained && older_ls && newer_ls && *older_ls > 0 && *newer_ls > 0;
  const double ratio = both_grow ? std::max(*older_ls, *newer_ls) / std::min(*older_ls, *newer_ls)
                                 : std::numeric_limits<double>::infinity();
  r.steady = ratio <= options_.steady_ratio;
  // A verdict's span also rises in its middle half (a warm-up at its start
  // and a step at its end fill both halves but not the middle), and its rise
  // stands out of the jitter of its floor.
  const auto middle = TheilSen(points.subspan(points.size() / 4, points.size() / 2));
  r.even = ratio <= options_.verdict_ratio && middle && middle->slope >= share &&
           RiseOverSpread(points, slope->slope) >= options_.verdict_signal;
  return r;
}

// The newest floor of the finest usable scale still rises at a share of r's
// rate: over its last stop_span / window points, at least two (a floor window
// is at least a tooth long, so two flat ones in a row are a stop), spaced a
// window apart (the time a window's minimum was seen jitters by up to a
// window). True when it cannot tell yet.
bool LeakDetector::FloorStillRising(const SpanResult& r) const {
  for (std::size_t i = 0; i < scales_.size(); ++i) {
    if (!Usable(i)) continue;
    const FloorTracker& f = scales_[i].floor;
    const auto n = std::max<std::size_t>(
        2, static_cast<std::size_t>(std::lround(Seconds(options_.stop_span) / f.window_s())));
    if (f.points().size() < n) return true;
    std::vector<Point> points;
    for (std::size_t k = f.points().size() - n; k < f.points().size(); ++k) {
      points.push_back({static_cast<double>(points.size()) * f.window_s(), f.points()[k].value});
    }
    const auto slope = TheilSen(points);
    return !slope || slope->slope >= options_.half_share * r.rate_bytes_per_s;
  }
  return true;
}

// Growth at a share of r's rate goes on: the newest floor says so, and so does
// memory against the same moment a period earlier where the teeth repeat.
bool LeakDetector::StillRising(const SpanResult& r) const {
  return FloorStillRising(r) && !PhaseStopped(r.rate_bytes_per_s);
}

// The teeth's period where they repeat regularly, a period holds enough
// samples to match each moment with the one a period earlier, and it is no
// longer than two of the coarsest floor windows (the longest tooth the
// tracker measures; it bounds the samples kept).
std::optional<ToothTracker::Period> LeakDetector::PhasePeriod() const {
  auto period = teeth_.period(kPhaseTolerance);
  if (!period || period->s < kPhaseSamples * interval_s_ ||
      period->s > 2 * scales_.back().floor.window_s()) {
    return std::nullopt;
  }
  return period;
}

// Only PhaseStopped reads the samples, and only while memory grows (or a
// forecast or verdict stands): they are kept from then on while the teeth keep
// their period, and let go a kept span after the growth was last seen.
void LeakDetector::KeepRecent(double t_s, double bytes) {
  const auto period = PhasePeriod();
  const double span_s = period ? kPhaseKeep * period->s + Seconds(options_.stop_span) : 0;
  if (period && (estimate_.growing || estimate_.forecast || estimate_.suspected)) {
    keep_until_s_ = t_s + span_s;
  }
  if (!period || t_s > keep_until_s_) {
    if (recent_.capacity() > 0) recent_ = std::vector<Point>();  // its memory too
    recent_begin_ = 0;
    return;
  }
  recent_.push_back({t_s, bytes});
  while (recent_begin_ < recent_.size() && recent_[recent_begin_].t_s < t_s - span_s) {
    ++recent_begin_;
  }
  if (recent_begin_ > recent_.size() / 4) {
    recent_.erase(recent_.begin(), recent_.begin() + static_cast<std::ptrdiff_t>(recent_begin_));
    recent_begin_ = 0;
  }
}

// The stop read against a period earlier, where the teeth have a period
// (period_stop.h).
bool LeakDetector::PhaseStopped(double rate_bytes_per_s) const {
  const auto period = PhasePeriod();
  if (!period || recent_.size() < recent_begin_ + 2) return false;
  PeriodStopOptions o;
  o.window_s = Seconds(options_.stop_span);
  o.share = options_.half_share;
  return StoppedAgainstAPeriodEarlier(std::span<const Point>(recent_).subspan(recent_begin_),
                                      *period, rate_bytes_per_s, o);
}

// How long a stop must be seen before it is taken for real: kStopDecisions
// decisions in a row, counting only those that bring the finest usable scale
// (the one StillRising judges on) a new floor point. Decisions come every base
// window; one that closes no window of that scale judges the same points
// again and confirms nothing, so a scale whose window is longer than the
// confirmation needs none (it already judged two whole windows).
double LeakDetector::StopConfirmation() const {
  const double base_s = std::max(1.0, Seconds(options_.base_window));
  const double wanted_s = (kStopDecisions - 1) * base_s;
  for (std::size_t i = 0; i < scales_.size(); ++i) {
    if (!Usable(i)) continue;
    const double w = scales_[i].floor.window_s();
    return std::floor(wanted_s / w + kEpsilon) * w;
  }
  return wanted_s;
}

// The coarsest floor reaches `span_s` back and over the last `span_s` it has
// neither a slope of min_rate nor risen by min_rate × span_s from its first
// points to its last (Theil–Sen alone would call it flat while a minority of
// its points still grow): its slope, or nullopt where it is not flat.
std::optional<SlopeEstimate> LeakDetector::FlatFor(double span_s) const {
  const FloorTracker& f = scales_.back().floor;
  if (f.points().size() < 2) return std::nullopt;
  if (f.points().back().t_s - f.points().front().t_s + f.window_s() + kEpsilon < span_s) {
    return std::nullopt;
  }
  const std::span<const Point> points = Recent(f.points(), span_s);
  if (points.size() < 6) return std::nullopt;
  const auto slope = TheilSen(points);
  if (!slope || slope->slope >= options_.min_rate_bytes_per_s) return std::nullopt;
  auto level = [](std::span<const Point> p) {
    return Median({p[0].value, p[1].value, p[2].value});
  };
  const double rise = level(points.last(3)) - level(points.first(3));
  if (rise >= options_.min_rate_bytes_per_s * span_s) return std::nullopt;
  return slope;
}

// The growth a verdict reported is gone: the floor has been flat for
// clear_after or longer, over a span that shows a quarter of the reported
// rate would not fit (its slope's upper ~95 % bound is below it). A slow
// leak rises within its floor's jitter over an hour, so an hour that looks
// flat is no evidence of a stop; a longer flat span (doubled while the floor
// stays flat that far back) narrows the bound until it is.
bool LeakDetector::GrowthGone() const {
  for (double span_s = Seconds(options_.clear_after);; span_s *= 2) {
    const auto slope = FlatFor(span_s);
    if (!slope) return false;
    if (slope->high < options_.half_share * reported_rate_) return true;
  }
}

// The scale the standing forecast was raised on is no longer usable (a tooth
// longer than its window fell since) and its newest floor is below the one it
// had then: what was forecast was the rising edge of that tooth.
bool LeakDetector::FellBack() const {
  if (Usable(raised_scale_)) return false;
  const auto& points = scales_[raised_scale_].floor.points();
  return !points.empty() && points.back().value < raised_floor_ - threshold_;
}

}  // namespace gpuwatch::leaks
