// CPU use of processes between samples. Pure bookkeeping: the caller passes
// the tick counts and the time, so it is tested without a clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

namespace gpuwatch::host {

class CpuMeter {
 public:
  // A process: (pid, start time in ticks since boot). Same pid with another
  // start time is another process (the pid was reused).
  using Key = std::pair<std::uint32_t, std::uint64_t>;
  using Clock = std::chrono::steady_clock;

  // Shorter than this since the last measurement (the same process listed on
  // two GPUs in one sample), Update answers the previous ratio and keeps its
  // mark, rather than a ratio over a few microseconds.
  static constexpr std::chrono::milliseconds kMinInterval{50};

  explicit CpuMeter(double ticks_per_second) : ticks_per_second_(ticks_per_second) {}

  // The CPU ratio (1.0 = one core busy) of `key`, whose utime + stime is now
  // `cpu_ticks`. First sight: the average over `seconds_since_start` (nullopt
  // when that is unknown or not positive). Later: the ratio since the previous
  // Update of the same key.
  std::optional<double> Update(Key key, std::uint64_t cpu_ticks, Clock::time_point now,
                               std::optional<double> seconds_since_start);

  // Forgets processes not updated since the previous EndSample.
  void EndSample();

  bool Has(const Key& key) const { return marks_.contains(key); }
  std::size_t size() const { return marks_.size(); }

 private:
  struct Mark {
    std::uint64_t cpu_ticks = 0;
    Clock::time_point at;
    std::optional<double> ratio;
    bool seen = false;  // updated since the last EndSample
  };
  double ticks_per_second_;
  std::map<Key, Mark> marks_;
};

}  // namespace gpuwatch::host
