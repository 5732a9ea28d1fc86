// The running children of a process, read from /proc, oldest first, with
// what a sweep tells each (GPUWATCH_SWEEP_VALUE and CUDA_VISIBLE_DEVICES from
// its environment): what `pid: child` processes bind to (docs/scenarios.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpuwatch::fake_nvml {

struct Child {
  unsigned pid = 0;
  unsigned long long start_ticks = 0;
  std::optional<double> sweep_value;                // GPUWATCH_SWEEP_VALUE
  std::optional<std::string> cuda_visible_devices;  // as set, when set
};

// Every running (not zombie) child of `parent`, oldest first.
std::vector<Child> ChildrenOf(unsigned parent);

// ChildrenOf(getpid()), read at most every 200 ms (NVML is asked many times
// a sample). A copy: the cache may be refreshed by another thread.
std::vector<Child> CallerChildren();

// Whether `child` may use the device at `index` with `uuid`: no
// CUDA_VISIBLE_DEVICES, or one that names it (by index or UUID).
bool SeesDevice(const Child& child, unsigned index, const std::string& uuid);

}  // namespace gpuwatch::fake_nvml
