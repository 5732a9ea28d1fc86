// The teeth of a memory series: how long memory stays up before it is given
// back (a training step's activations, a cache emptied every N steps, an
// evaluation pass). A zig-zag filter with a threshold finds the drops: the
// series turns down when it falls more than `threshold` below its highest
// point since it last turned up, and up again when it rises more than
// `threshold` above its lowest. At each drop, the tooth is the time since the
// series was last as low as where it fell to (within half the threshold): for a sawtooth the
// period, for a tooth on top of growth only the tooth, not the growth under it. A floor window
// shorter than a tooth follows the tooth's rising edge, which is not growth, so the leak detector
// uses only floor windows longer than the recent teeth. Memory: at most 2048 samples of history.
// Not thread-safe; one owner.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <vector>

namespace gpuwatch::leaks {

class ToothTracker {
 public:
  // Keeps the last `keep` teeth (>= 1); a tooth is at most `horizon_s` long.
  explicit ToothTracker(std::size_t keep = 8, double horizon_s = 1800);

  // One sample (t_s non-decreasing); `threshold` > 0, in the series' units,
  // may change from sample to sample.
  void Add(double t_s, double value, double threshold);

  // The longest of the recent teeth, in seconds; 0 before the first drop.
  double longest_s() const;

 private:
  struct Low {
    double t_s;
    double value;
  };
  // When the series was last at or below `value` (before now).
  double LastAtOrBelow(double value) const;

  std::size_t keep_;
  double horizon_s_;
  bool up_ = true;                 // the phase we are in
  std::optional<double> extreme_;  // highest value while up, lowest while down
  // Values increasing with time: each is the newest sample at or below every
  // later one, so "last time at or below v" is a binary search.
  std::deque<Low> lows_;
  std::vector<double> teeth_s_;  // at most keep_
};

}  // namespace gpuwatch::leaks
