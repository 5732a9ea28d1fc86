// A process's identity, everywhere (events, leak trackers, GPU leases): pids
// are reused, (pid, start time) is not.
#pragma once

#include <compare>
#include <cstdint>

namespace gpuwatch {

struct ProcessKey {
  std::uint32_t pid = 0;
  std::uint64_t start_ticks = 0;  // /proc/PID/stat field 22: clock ticks after boot
  friend auto operator<=>(const ProcessKey&, const ProcessKey&) = default;
};

}  // namespace gpuwatch
