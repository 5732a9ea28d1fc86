#include "analysis/job/framework_table.h"

#include <algorithm>

namespace gpuwatch {

void FrameworkTable::Report(std::uint32_t pid, const std::string& framework, int cuda_device,
                            std::map<std::string, double> bytes,
                            std::chrono::system_clock::time_point time) {
  Entry& e = entries_[{pid, framework, cuda_device}];
  if (e.seen == std::chrono::system_clock::time_point{}) e.seen = time;
  e.bytes = std::move(bytes);
  e.time = time;
}

std::vector<ProcessFrameworkMemory> FrameworkTable::Current(const Snapshot& snapshot) {
  std::map<std::uint32_t, std::vector<int>> gpus_of;  // pid -> NVML indices, ascending
  for (const DeviceSample& d : snapshot.devices) {
    for (const ProcessSample& p : d.processes) {
      auto& list = gpus_of[p.pid];
      if (std::find(list.begin(), list.end(), d.index) == list.end()) list.push_back(d.index);
    }
  }
  for (auto& [pid, list] : gpus_of) std::sort(list.begin(), list.end());
  std::vector<ProcessFrameworkMemory> out;
  for (auto it = entries_.begin(); it != entries_.end();) {
    const auto& [pid, framework, device] = it->first;
    Entry& e = it->second;
    const auto found = gpus_of.find(pid);
    if (found == gpus_of.end()) {
      if (snapshot.time - e.seen > grace_) {
        it = entries_.erase(it);
        continue;
      }
    } else {
      e.seen = snapshot.time;
      const std::vector<int>& gpus = found->second;
      if (device >= 0 && static_cast<std::size_t>(device) < gpus.size()) {
        out.push_back({gpus[static_cast<std::size_t>(device)], pid, framework, e.bytes, e.time});
      }
    }
    ++it;
  }
  return out;
}

}  // namespace gpuwatch
