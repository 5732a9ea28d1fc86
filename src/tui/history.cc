#include "tui/history.h"

#include <iterator>

namespace gpuwatch::tui {

double SecondsOf(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

ProcessKey KeyOf(const ProcessSample& p) { return ProcessKey{p.pid, p.host.start_ticks}; }

void Series::Add(double t, double v, double keep_s, std::size_t max_points) {
  // A recording played again from its start (a seek back) restarts the series.
  if (!points.empty() && t < points.back().first) points.clear();
  points.emplace_back(t, v);
  while (points.size() > max_points || (points.size() > 1 && points.front().first < t - keep_s)) {
    points.pop_front();
  }
}

std::optional<double> Series::last() const {
  if (points.empty()) return std::nullopt;
  return points.back().second;
}

void History::Add(const Snapshot& s) {
  const double t = SecondsOf(s.time);
  auto add = [&](Series& series, const Reading& r, double scale = 1) {
    if (r.is_number()) series.Add(t, r.number() * scale, keep_s_, max_points_);
  };
  for (const DeviceSample& d : s.devices) {
    DeviceHistory& h = devices_[d.index];
    if (d.health == DeviceHealth::kLost || s.stale) continue;
    add(h.memory_ratio, d.fields[FieldId::kMemoryUsedRatio]);
    add(h.utilization, d.fields[FieldId::kUtilizationGpuRatio]);
    add(h.power_watts, d.fields[FieldId::kPowerDrawWatts]);
    add(h.temperature, d.fields[FieldId::kTemperatureGpuCelsius]);
    for (const ProcessSample& p : d.processes) {
      ProcessHistory& ph = processes_[KeyOf(p)];
      ph.gpu = d.index;
      ph.last_seen = t;
      add(ph.memory_bytes, p.fields[FieldId::kProcessUsedMemoryBytes]);
      add(ph.sm_ratio, p.fields[FieldId::kProcessSmUtilizationRatio]);
    }
  }
  // Processes gone for longer than the charts reach are forgotten.
  for (auto it = processes_.begin(); it != processes_.end();) {
    it = it->second.last_seen < t - keep_s_ || it->second.last_seen > t ? processes_.erase(it)
                                                                        : std::next(it);
  }
}

void History::Clear() {
  devices_.clear();
  processes_.clear();
}

const DeviceHistory* History::device(int index) const {
  auto it = devices_.find(index);
  return it == devices_.end() ? nullptr : &it->second;
}

const ProcessHistory* History::process(const ProcessKey& key) const {
  auto it = processes_.find(key);
  return it == processes_.end() ? nullptr : &it->second;
}

}  // namespace gpuwatch::tui
