// Windows of metrics over snapshots (the Python Collector's engine): each
// open window folds every snapshot into mean / min / max / last per numeric
// device and host field. Pure bookkeeping; not thread-safe (Monitor locks).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "gpuwatch/monitor.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::monitor {

class MetricWindows {
 public:
  std::uint64_t Open();
  void Close(std::uint64_t id);
  // Folds one snapshot into every open window.
  void Observe(const Snapshot& snapshot);
  // nullptr for an unknown window.
  const std::map<std::string, MetricStats>* Stats(std::uint64_t id) const;
  void Reset(std::uint64_t id);

 private:
  std::uint64_t next_ = 1;
  std::map<std::uint64_t, std::map<std::string, MetricStats>> windows_;
};

// "gpu3/memory_used_bytes" -> value, and "host/..." for host fields: every
// numeric reading of the snapshot (MIG devices as "gpu5:1/...").
std::map<std::string, double> NumericReadings(const Snapshot& snapshot);

}  // namespace gpuwatch::monitor
