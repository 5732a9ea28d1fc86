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

  // How the drops repeat, where they do regularly: the median time between
  // the recent drops (at least kPeriodIntervals of them), when every one of
  // those intervals is within `tolerance` × the median of it.
  struct Period {
    double s = 0;
    double jitter_s = 0;  // the farthest of those intervals from the median
    double height = 0;    // the tallest of the recent teeth, peak to trough
  };
  std::optional<Period> period(double tolerance) const;
  static constexpr std::size_t kPeriodIntervals = 4;

 private:
  struct Low {
    double t_s;
    double value;
  };
  // A tooth falling to `value` at t_s: how long since memory was last as low.
  double ToothTo(double t_s, double value, double threshold) const;
  // When the series was last at or below `value` (before now).
  double LastAtOrBelow(double value) const;
  void MeasurePeriod();  // period_ from drops_s_, at each drop

  std::size_t keep_;
  double horizon_s_;
  bool up_ = true;                 // the phase we are in
  std::optional<double> extreme_;  // highest value while up, lowest while down
  // Values increasing with time: each is the newest sample at or below every
  // later one, so "last time at or below v" is a binary search.
  std::deque<Low> lows_;
  std::vector<double> teeth_s_;  // at most keep_
  std::vector<double> drops_s_;  // when the last keep_ + 1 drops were seen
  std::vector<double> heights_;  // peak to trough of the last keep_ teeth
  double peak_ = 0;              // of the tooth falling now
  Period period_;                // s = 0 before enough drops
};

}  // namespace gpuwatch::leaks
