#include "analysis/leaks/floor_tracker.h"

#include <algorithm>
#include <cmath>

namespace gpuwatch::leaks {

FloorTracker::FloorTracker(double window_s, std::size_t capacity)
    : window_s_(window_s > 0 ? window_s : 1), capacity_(std::max<std::size_t>(8, capacity)) {
  capacity_ += capacity_ % 2;
}

bool FloorTracker::Add(double t_s, double bytes) {
  last_ = bytes;
  if (!window_start_) {
    window_start_ = t_s;
    open_min_ = open_max_ = bytes;
    open_min_t_ = t_s;
    return false;
  }
  if (t_s < *window_start_ + window_s_) {
    if (bytes < open_min_) {
      open_min_ = bytes;
      open_min_t_ = t_s;
    }
    open_max_ = std::max(open_max_, bytes);
    return false;
  }
  if (points_.size() == points_.capacity()) {
    // Doubling, but never past what a compaction leaves room for: a detector
    // per process keeps seven of these.
    points_.reserve(std::min(capacity_ + 1, std::max<std::size_t>(8, 2 * points_.size())));
  }
  points_.push_back(Point{open_min_t_, open_min_});
  closed_max_ = open_max_;
  *window_start_ += window_s_ * std::floor((t_s - *window_start_) / window_s_);
  open_min_ = open_max_ = bytes;
  open_min_t_ = t_s;
  if (points_.size() > capacity_) Compact();
  return true;
}

std::optional<double> FloorTracker::peak() const {
  if (!window_start_) return std::nullopt;
  return closed_max_ ? std::max(*closed_max_, open_max_) : open_max_;
}

// Halves the resolution of the older half. The merged value is the mean of the
// two minima, not their minimum: the minimum of a longer window sits lower on a
// sawtooth, which would read as growth against the newer, unmerged points.
void FloorTracker::Compact() {
  const std::size_t older = capacity_ / 2;
  std::size_t merged = 0;
  for (std::size_t i = 0; i + 1 < older; i += 2) {
    points_[merged++] = Point{(points_[i].t_s + points_[i + 1].t_s) / 2,
                              (points_[i].value + points_[i + 1].value) / 2};
  }
  points_.erase(points_.begin() + static_cast<std::ptrdiff_t>(merged),
                points_.begin() + static_cast<std::ptrdiff_t>(older));
}

}  // namespace gpuwatch::leaks
