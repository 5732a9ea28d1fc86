#include "analysis/leaks/series_check.h"

#include <algorithm>
#include <cmath>

namespace gpuwatch::leaks {

SeriesCheck CheckSeries(std::span<const Point> points, double min_rate) {
  SeriesCheck out;
  if (points.size() < 16) return out;
  const double span = points.back().t_s - points.front().t_s;
  if (!(span >= 15)) return out;  // 16 iterations
  // The window's floor sees through a loop's sawtooth; the verdict needs the
  // growth sustained over the newest half of the series.
  const auto window = std::chrono::seconds(static_cast<long long>(std::max(1.0, span / 16)));
  LeakOptions options = ScaledLeakOptions(window);
  options.scales = 1;
  options.min_rate_bytes_per_s = min_rate;
  options.verdict_min_span = options.verdict_max_span = window * 8;
  // The jitter test guards verdicts made over and over for hours on a floor
  // that noise moves; here one series of a job's own allocations is judged,
  // and a window that is not a multiple of the loop's period leaves its
  // floor a sawtooth-sized but regular jitter the trend tests see through.
  options.verdict_signal = 0;
  LeakDetector detector(options);
  for (const Point& p : points) (void)detector.ObserveAt(p.t_s, p.value);
  out.estimate = detector.estimate();
  out.leak = out.estimate.suspected;
  out.enough_evidence = out.estimate.enough_evidence;
  return out;
}

}  // namespace gpuwatch::leaks
