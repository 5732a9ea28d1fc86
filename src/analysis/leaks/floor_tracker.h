// The floor of a memory series: the minimum of each fixed time window. Deep
// learning memory is a sawtooth (allocate during a step, free at its end) with
// spikes (evaluation, checkpoints); the floor ignores both and moves only when
// memory stays allocated. Keeps a bounded history so it can run for days: when
// it holds more than `capacity` points, the older half is merged pairwise.
// Not thread-safe; one owner.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "analysis/leaks/robust_stats.h"

namespace gpuwatch::leaks {

class FloorTracker {
 public:
  // window_s > 0; capacity >= 8 (rounded up to even).
  FloorTracker(double window_s, std::size_t capacity);

  // Adds a sample (t_s non-decreasing). Returns true when it closed a window,
  // i.e. a new floor point was appended. A gap longer than a window skips the
  // empty windows.
  bool Add(double t_s, double bytes);

  // Floor points, oldest first; t_s is when the window's minimum was seen
  // (sparse samples then give exact slopes), value the window minimum (the
  // mean of times and minima for merged points).
  const std::vector<Point>& points() const { return points_; }
  // Highest sample in the last closed window and the open one; nullopt before
  // the first sample.
  std::optional<double> peak() const;
  std::optional<double> last() const { return last_; }
  double window_s() const { return window_s_; }
  std::size_t capacity() const { return capacity_; }

 private:
  void Compact();

  double window_s_;
  std::size_t capacity_;
  std::vector<Point> points_;  // grown to capacity + 1 at most, then compacted in place
  std::optional<double> window_start_;
  double open_min_ = 0;
  double open_min_t_ = 0;
  double open_max_ = 0;
  std::optional<double> closed_max_;
  std::optional<double> last_;
};

}  // namespace gpuwatch::leaks
