#include "analysis/leaks/period_stop.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace gpuwatch::leaks {

bool StoppedAgainstAPeriodEarlier(std::span<const Point> samples,
                                  const ToothTracker::Period& period, double rate_bytes_per_s,
                                  const PeriodStopOptions& options) {
  if (samples.size() < 2 || !(period.s > 0) || !(rate_bytes_per_s > 0)) return false;
  const double period_s = period.s;
  const double now = samples.back().t_s;
  const double window = options.window_s;
  if (samples.front().t_s > now - window - period_s) return false;  // not a period back yet
  // D at every sample of the window, or at most max_points of them evenly (at
  // `run`'s 100 ms a 40 s window holds 400), the newest always.
  const auto first = std::lower_bound(samples.begin(), samples.end(), now - window,
                                      [](const Point& p, double t) { return p.t_s < t; });
  const auto from = static_cast<std::size_t>(first - samples.begin());
  const std::size_t count = samples.size() - from;
  if (count < options.min_points) return false;
  const std::size_t stride = (count + options.max_points - 1) / options.max_points;
  std::vector<Point> d;
  std::size_t before = 0;  // samples[before] is the newest sample at or before a period earlier
  for (std::size_t i = from + (count - 1) % stride; i < samples.size(); i += stride) {
    const double then = samples[i].t_s - period_s;
    while (samples[before + 1].t_s < then) ++before;
    const Point& a = samples[before];
    const Point& b = samples[before + 1];
    const double share = b.t_s > a.t_s ? std::clamp((then - a.t_s) / (b.t_s - a.t_s), 0.0, 1.0) : 0;
    d.push_back({samples[i].t_s - now, samples[i].value - (a.value + share * (b.value - a.value))});
  }
  if (d.size() < options.min_points) return false;
  const auto slope = TheilSen(d);
  if (!slope) return false;
  const Residuals residuals = ResidualsAbout(d, slope->slope);
  const double spread = residuals.Spread();
  const double mismatch = period.height * period.jitter_s / period.s;
  if (rate_bytes_per_s * period_s < options.signal * (spread + 2 * mismatch)) return false;
  const double limit = options.share * rate_bytes_per_s;
  const double level = residuals.Quantile(0.5);  // D now, on its Theil–Sen line
  return rate_bytes_per_s + slope->high <= limit ||
         (level + spread / 2 + mismatch) / period_s <= limit;
}

}  // namespace gpuwatch::leaks
