// LeakTracker: leak detection and out-of-memory forecasts over snapshots. One
// LeakDetector per device (kMemoryUsedBytes), per process on each device
// (kProcessUsedMemoryBytes, keyed by GPU index and (pid, start ticks)) and per
// framework series a job reports (allocated bytes, free of the allocator's
// cache), each told the device's free memory so that its judgement scales
// with the danger (leak_detector.h); free memory is counted at the device's
// highest use of the last minute, since OOM strikes at the top of the sawtooth
// of every process on it. A framework series is also judged per
// training step when step marks come (series_check.h), and that verdict names
// the rate per step. A process missing from a healthy device's list has ended
// and is forgotten. Returns leak_suspected / leak_updated / leak_cleared and
// oom_forecast / oom_forecast_cleared events and keeps current estimates for
// reports and gauges. Not thread-safe: the analysis thread owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/leaks/leak_detector.h"
#include "analysis/leaks/robust_stats.h"
#include "analysis/leaks/step_rate.h"
#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::leaks {

// What a detector watches: a device (no process, no framework), a process on
// a device, or a framework's allocated bytes on a device (of a process when
// the job says which).
struct Subject {
  int gpu = 0;
  std::optional<ProcessKey> process;
  std::string framework;  // "torch", "jax", ...; empty for NVML's series
  friend auto operator<=>(const Subject&, const Subject&) = default;
};

struct LeakReport {
  Subject subject;
  LeakEstimate estimate;
  std::optional<double> capacity_bytes;  // the device's total memory
  // At this series' growth rate, from the device's free memory; only while it grows.
  std::optional<std::chrono::seconds> time_to_full;
  std::optional<double> bytes_per_step;  // when step marks are known
};

class LeakTracker {
 public:
  explicit LeakTracker(const LeakOptions& options = {});
  // The fields Observe reads (a sampler for a LeakTracker reads at least these).
  static FieldMask Fields();

  // Feeds one snapshot (times non-decreasing) and returns the events it
  // caused: devices first, then processes, in index / key order.
  std::vector<Event> Observe(const Snapshot& snapshot);

  // A training step mark: MiB/step for every series, and a point of the
  // per-step series of every framework that reported since the last mark.
  // Returns the events the per-step verdicts caused.
  std::vector<Event> ObserveStep(std::chrono::system_clock::time_point time, std::uint64_t step);

  // A framework's allocated bytes on NVML GPU `gpu`, from process `pid` when
  // known. Returns the events it caused.
  std::vector<Event> ObserveFramework(std::chrono::system_clock::time_point time, int gpu,
                                      std::optional<std::uint32_t> pid,
                                      const std::string& framework, double allocated_bytes);

  // Current estimates of every tracked series.
  std::vector<LeakReport> Reports() const;
  std::optional<LeakReport> Report(const Subject& subject) const;
  std::size_t tracked() const { return detectors_.size(); }
  const LeakOptions& options() const { return options_; }

 private:
  struct Tracked {
    LeakDetector detector;
    std::optional<double> capacity_bytes;
    // Framework series only: allocated bytes per step, and its verdict.
    std::optional<double> pending_bytes;  // reported since the last step mark
    std::vector<Point> per_step;
    std::size_t checked_at = 0;  // per_step.size() when last judged
    bool step_verdict = false;
  };
  struct Device {
    double total_bytes = 0;
    double free_bytes = 0;  // total - the highest used of the last kPeakWindow
    // Used bytes of the last kPeakWindow, decreasing: the front is the highest.
    std::deque<std::pair<std::chrono::system_clock::time_point, double>> peaks;
    std::map<std::uint32_t, std::uint64_t> start_ticks;  // by pid: who sends framework reports
  };
  Tracked& Track(const Subject& subject);
  void Feed(std::chrono::system_clock::time_point time, const Subject& subject, double bytes,
            std::vector<Event>& out);
  LeakReport MakeReport(const Subject& subject, const Tracked& tracked) const;
  Event MakeEvent(std::chrono::system_clock::time_point time, const Subject& subject,
                  LeakChange change, const Tracked& tracked) const;
  std::optional<Event> JudgePerStep(std::chrono::system_clock::time_point time,
                                    const Subject& subject, Tracked& tracked) const;

  LeakOptions options_;
  std::map<Subject, Tracked> detectors_;
  std::map<int, Device> devices_;  // as of the newest snapshot
  StepRate steps_;
};

}  // namespace gpuwatch::leaks
