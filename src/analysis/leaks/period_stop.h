// Whether growth under teeth that repeat at a regular period P has stopped,
// read against the same moment a period earlier (docs/leaks.md, Method, item
// 4). D(t) = used(t) - used(t - P) cancels the teeth and leaves the growth of
// the last period: D / P is its mean rate, and D's slope is how much the rate
// changed within a period. Right after growth stops D falls at the old rate; a
// period later it is flat at zero. Either shows the stop within a stop span,
// where a floor needs one or two new tooth bottoms. Pure.
#pragma once

#include <cstddef>
#include <span>

#include "analysis/leaks/robust_stats.h"
#include "analysis/leaks/tooth_tracker.h"

namespace gpuwatch::leaks {

struct PeriodStopOptions {
  double window_s = 40;         // D is judged over this span, the newest
  std::size_t min_points = 8;   // ... at this many samples at least
  std::size_t max_points = 64;  // ... and at most (evenly, the newest always)
  double share = 0.25;          // stopped: the rate now is under this × the rate
  // Evidence only where the growth of a period is at least this × what else
  // moves D: its 10-90 % spread about its line (noise), and twice what a tooth
  // that starts up to the periods' jitter earlier or later can (its edge's
  // slope × the jitter: height × jitter / P).
  double signal = 4;
};

// `samples` (time order) should reach a period and a window back from the
// newest; false (no evidence) when they do not. `rate`: the growth judged,
// in value units per second.
bool StoppedAgainstAPeriodEarlier(std::span<const Point> samples,
                                  const ToothTracker::Period& period, double rate,
                                  const PeriodStopOptions& options = {});

}  // namespace gpuwatch::leaks
