// What top remembers of a host, for its charts: each GPU's memory,
// utilization, power and temperature, and each process's memory and SM
// share, over the last hour (bounded by time and by count). Fed one
// snapshot at a time by the source; read by the view.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "gpuwatch/process_key.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::tui {

// One series: (seconds since the epoch, value); absent readings are skipped.
struct Series {
  std::deque<std::pair<double, double>> points;
  void Add(double t, double v, double keep_s, std::size_t max_points);
  // The newest value, if any.
  std::optional<double> last() const;
};

struct DeviceHistory {
  Series memory_ratio;  // used / total, 0..1
  Series utilization;   // 0..1
  Series power_watts;
  Series temperature;
};

struct ProcessHistory {
  int gpu = 0;
  Series memory_bytes;
  Series sm_ratio;
  double last_seen = 0;  // snapshot time
};

class History {
 public:
  explicit History(std::chrono::seconds keep = std::chrono::hours(1), std::size_t max_points = 7200)
      : keep_s_(static_cast<double>(keep.count())), max_points_(max_points) {}

  void Add(const Snapshot& snapshot);
  void Clear();

  // By NVML index of the physical GPU; nullptr when never seen.
  const DeviceHistory* device(int index) const;
  const ProcessHistory* process(const ProcessKey& key) const;

 private:
  double keep_s_;
  std::size_t max_points_;
  std::map<int, DeviceHistory> devices_;
  std::map<ProcessKey, ProcessHistory> processes_;
};

double SecondsOf(std::chrono::system_clock::time_point t);
ProcessKey KeyOf(const ProcessSample& p);

}  // namespace gpuwatch::tui
