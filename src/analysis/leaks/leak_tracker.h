// LeakTracker: leak detection over snapshots. One LeakDetector per device
// (kMemoryUsedBytes, capacity kMemoryTotalBytes) and per process on each device
// (kProcessUsedMemoryBytes, keyed by GPU index and (pid, start ticks)); a
// process missing from a healthy device's list has ended and is forgotten.
// Returns kLeakSuspected / kLeakCleared events and keeps current estimates for
// reports and gauges. Not thread-safe: the analysis thread owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "analysis/leaks/leak_detector.h"
#include "analysis/leaks/step_rate.h"
#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::leaks {

// What a detector watches: a device (no process) or a process on a device.
struct Subject {
  int gpu = 0;
  std::optional<ProcessKey> process;
  friend auto operator<=>(const Subject&, const Subject&) = default;
};

struct LeakReport {
  Subject subject;
  LeakEstimate estimate;
  std::optional<double> capacity_bytes;  // the device's total memory
  // Device full at the device's floor growth rate; only while that floor grows.
  std::optional<std::chrono::seconds> time_to_full;
  std::optional<double> bytes_per_step;  // when step marks are known
};

class LeakTracker {
 public:
  explicit LeakTracker(const LeakOptions& options = {});

  // Feeds one snapshot (times non-decreasing) and returns the leak events it
  // caused: devices first, then processes, in index / key order.
  std::vector<Event> Observe(const Snapshot& snapshot);

  // A training step mark, for MiB/step.
  void ObserveStep(std::chrono::system_clock::time_point time, std::uint64_t step);

  // Current estimates of every tracked device and process.
  std::vector<LeakReport> Reports() const;
  std::optional<LeakReport> Report(const Subject& subject) const;
  std::size_t tracked() const { return detectors_.size(); }

 private:
  struct Tracked {
    LeakDetector detector;
    std::optional<double> capacity_bytes;
  };
  LeakReport MakeReport(const Subject& subject, const Tracked& tracked) const;
  Event MakeEvent(std::chrono::system_clock::time_point time, const Subject& subject,
                  LeakChange change, const Tracked& tracked) const;

  LeakOptions options_;
  std::map<Subject, Tracked> detectors_;
  StepRate steps_;
};

}  // namespace gpuwatch::leaks
