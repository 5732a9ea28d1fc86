// A leak verdict over a whole series with one value per iteration or per
// training step (leak_check in Python, a framework's allocated bytes reported
// at step marks): the detector at one scale whose floor window is 1/16 of the
// series, deciding on its newest half. Pure function.
#pragma once

#include <span>

#include "analysis/leaks/leak_detector.h"
#include "analysis/leaks/robust_stats.h"

namespace gpuwatch::leaks {

struct SeriesCheck {
  bool leak = false;
  bool enough_evidence = false;  // a span of half the series was tested
  LeakEstimate estimate;         // rates in value units per unit of t
};

// `points`: t = iteration or step (increasing), value = bytes. A leak grows
// at least `min_rate` per unit of t.
SeriesCheck CheckSeries(std::span<const Point> points, double min_rate);

}  // namespace gpuwatch::leaks
