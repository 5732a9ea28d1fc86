#include "host/cpu_meter.h"

namespace gpuwatch::host {

std::optional<double> CpuMeter::Update(Key key, std::uint64_t cpu_ticks, Clock::time_point now,
                                       std::optional<double> seconds_since_start) {
  auto [it, first_sight] = marks_.try_emplace(key);
  Mark& mark = it->second;
  mark.seen = true;
  if (!first_sight) {
    std::chrono::duration<double> elapsed = now - mark.at;
    if (now - mark.at < kMinInterval) return mark.ratio;
    if (cpu_ticks >= mark.cpu_ticks) {
      double used_s = static_cast<double>(cpu_ticks - mark.cpu_ticks) / ticks_per_second_;
      mark.ratio = used_s / elapsed.count();
      mark.cpu_ticks = cpu_ticks;
      mark.at = now;
      return mark.ratio;
    }
    // Counters went backwards: not the process we measured; start over.
  }
  mark.cpu_ticks = cpu_ticks;
  mark.at = now;
  mark.ratio.reset();
  if (seconds_since_start && *seconds_since_start > 0) {
    mark.ratio = static_cast<double>(cpu_ticks) / ticks_per_second_ / *seconds_since_start;
  }
  return mark.ratio;
}

void CpuMeter::EndSample() {
  for (auto it = marks_.begin(); it != marks_.end();) {
    if (!it->second.seen) {
      it = marks_.erase(it);
    } else {
      it->second.seen = false;
      ++it;
    }
  }
}

}  // namespace gpuwatch::host
