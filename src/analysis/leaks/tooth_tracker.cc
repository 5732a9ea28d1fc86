#include "analysis/leaks/tooth_tracker.h"

#include <algorithm>
#include <cmath>

namespace gpuwatch::leaks {
namespace {
// A steadily rising series keeps every sample: bound it (at 10 Hz, 200 s).
constexpr std::size_t kMaxLows = 2048;
}  // namespace

ToothTracker::ToothTracker(std::size_t keep, double horizon_s)
    : keep_(keep < 1 ? 1 : keep), horizon_s_(horizon_s > 0 ? horizon_s : 1) {}

double ToothTracker::LastAtOrBelow(double value) const {
  // lows_ is increasing in value: the entries at or below `value` are a prefix.
  auto end = std::upper_bound(lows_.begin(), lows_.end(), value,
                              [](double v, const Low& l) { return v < l.value; });
  if (end == lows_.begin()) return lows_.empty() ? 0 : lows_.front().t_s;
  return std::prev(end)->t_s;
}

double ToothTracker::ToothTo(double t_s, double value, double threshold) const {
  // Within half the threshold of `value`: the bottoms of a sawtooth differ by noise.
  return std::min(horizon_s_, t_s - LastAtOrBelow(value + threshold / 2));
}

void ToothTracker::Add(double t_s, double value, double threshold) {
  if (!extreme_) {
    extreme_ = value;
  } else if (up_) {
    if (value > *extreme_) {
      extreme_ = value;
    } else if (value < *extreme_ - threshold) {
      if (teeth_s_.size() == keep_) teeth_s_.erase(teeth_s_.begin());
      teeth_s_.push_back(ToothTo(t_s, value, threshold));
      if (drops_s_.size() == keep_ + 1) drops_s_.erase(drops_s_.begin());
      drops_s_.push_back(t_s);
      MeasurePeriod();
      peak_ = *extreme_;
      up_ = false;
      extreme_ = value;
    }
  } else if (value < *extreme_) {
    // Falling further: the tooth is as long as the time since memory was last
    // this low (a drop first seen as a small wobble may be a cycle's fall).
    teeth_s_.back() = std::max(teeth_s_.back(), ToothTo(t_s, value, threshold));
    extreme_ = value;
  } else if (value > *extreme_ + threshold) {
    if (heights_.size() == keep_) heights_.erase(heights_.begin());
    heights_.push_back(peak_ - *extreme_);
    period_.height = *std::max_element(heights_.begin(), heights_.end());
    up_ = true;
    extreme_ = value;
  }
  while (!lows_.empty() && lows_.back().value >= value) lows_.pop_back();
  lows_.push_back(Low{t_s, value});
  while (lows_.size() > 1 && (lows_.front().t_s < t_s - horizon_s_ || lows_.size() > kMaxLows)) {
    lows_.pop_front();
  }
}

double ToothTracker::longest_s() const {
  if (teeth_s_.empty()) return 0;
  return *std::max_element(teeth_s_.begin(), teeth_s_.end());
}

void ToothTracker::MeasurePeriod() {
  period_.s = 0;
  if (drops_s_.size() < kPeriodIntervals + 1) return;
  std::vector<double> intervals;
  for (std::size_t i = 1; i < drops_s_.size(); ++i) {
    intervals.push_back(drops_s_[i] - drops_s_[i - 1]);
  }
  std::vector<double> sorted = intervals;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  period_.s = sorted[sorted.size() / 2];
  period_.jitter_s = 0;
  for (double interval : intervals) {
    period_.jitter_s = std::max(period_.jitter_s, std::fabs(interval - period_.s));
  }
}

std::optional<ToothTracker::Period> ToothTracker::period(double tolerance) const {
  if (!(period_.s > 0) || period_.jitter_s > tolerance * period_.s) return std::nullopt;
  return period_;
}

}  // namespace gpuwatch::leaks
