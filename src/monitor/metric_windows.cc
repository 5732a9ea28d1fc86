#include "monitor/metric_windows.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpuwatch::monitor {

std::map<std::string, double> NumericReadings(const Snapshot& s) {
  std::map<std::string, double> out;
  for (const FieldInfo& f : Catalogue()) {
    if (f.scope == Scope::kHost && s.host[f.id].is_number()) {
      out[fmt::format("host/{}", f.key)] = s.host[f.id].number();
    }
  }
  for (const auto* list : {&s.devices, &s.mig_devices}) {
    for (const DeviceSample& d : *list) {
      const std::string device = d.mig_index ? fmt::format("gpu{}:{}", d.index, *d.mig_index)
                                             : fmt::format("gpu{}", d.index);
      for (const FieldInfo& f : Catalogue()) {
        if (f.scope != Scope::kDevice || !d.fields[f.id].is_number()) continue;
        out[fmt::format("{}/{}", device, f.key)] = d.fields[f.id].number();
      }
    }
  }
  return out;
}

std::uint64_t MetricWindows::Open() {
  windows_[next_];
  return next_++;
}

void MetricWindows::Close(std::uint64_t id) { windows_.erase(id); }

void MetricWindows::Observe(const Snapshot& snapshot) {
  if (windows_.empty()) return;
  const auto values = NumericReadings(snapshot);
  for (auto& [id, stats] : windows_) {
    for (const auto& [key, v] : values) {
      MetricStats& m = stats[key];
      m.min = m.count == 0 ? v : std::min(m.min, v);
      m.max = m.count == 0 ? v : std::max(m.max, v);
      m.mean += (v - m.mean) / static_cast<double>(m.count + 1);
      m.last = v;
      ++m.count;
    }
  }
}

const std::map<std::string, MetricStats>* MetricWindows::Stats(std::uint64_t id) const {
  auto it = windows_.find(id);
  return it == windows_.end() ? nullptr : &it->second;
}

void MetricWindows::Reset(std::uint64_t id) {
  if (auto it = windows_.find(id); it != windows_.end()) it->second.clear();
}

}  // namespace gpuwatch::monitor
