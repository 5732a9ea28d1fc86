#include "device_model.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <sstream>
#include <string>

#include "backends/nvml/nvml_api.h"

namespace gpuwatch::fake_nvml {
namespace {

double Age(const ProcessSpec& p, double t) {
  return std::max(0.0, t - (p.child_of_caller ? p.bound_at_s : p.start_s));
}

double IntegratePower(const DeviceSpec& d, double from_s, double to_s) {
  return (PowerDrawW(d, from_s) + PowerDrawW(d, to_s)) / 2.0 * (to_s - from_s) * 1000.0;
}

}  // namespace

void FillPciInfo(const DeviceSpec& d, nvmlPciInfo_t& pci) {
  std::memset(&pci, 0, sizeof pci);
  unsigned domain = 0, bus = 0, dev = 0, function = 0;
  std::sscanf(d.pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &function);
  pci.domain = domain;
  pci.bus = bus;
  pci.device = dev;
  pci.pciDeviceId = d.pci_device_id;
  pci.pciSubSystemId = d.pci_subsystem_id;
  std::snprintf(pci.busId, sizeof pci.busId, "%s", d.pci_bus_id.c_str());
  std::snprintf(pci.busIdLegacy, sizeof pci.busIdLegacy, "%04X:%02X:%02X.%X", domain & 0xFFFF,
                bus & 0xFF, dev & 0xFF, function & 0xF);
}

unsigned ToUnsigned(double value) {
  const double r = std::round(std::max(0.0, value));
  return r >= 4294967295.0 ? 4294967295u : static_cast<unsigned>(r);
}

unsigned long long ToULL(double value) {
  const double r = std::round(std::max(0.0, value));
  return r >= 1.8e19 ? std::numeric_limits<unsigned long long>::max()
                     : static_cast<unsigned long long>(r);
}

// Reads a bound process's pid from its file; false while there is none.
bool BindPid(const ProcessSpec& p) {
  std::ifstream in(p.pid_file);
  unsigned pid = 0;
  if (!(in >> pid) || pid == 0) return false;
  p.pid = pid;
  return true;
}

namespace {

// Binds a `pid: child` process to the caller's oldest child that is not a
// sweep's run (those have GPUWATCH_SWEEP_VALUE and bind to the expressions of
// bs); false while there is none. A new child restarts the series at `t`.
bool BindChild(const ProcessSpec& p, double t) {
  const auto children = CallerChildren();
  const auto child =
      std::find_if(children.begin(), children.end(), [](const Child& c) { return !c.sweep_value; });
  if (child == children.end()) return false;
  if (child->pid != p.pid) {
    p.pid = child->pid;
    p.bound_at_s = t;
  }
  return true;
}

// Listed at t by its time window and binding (sweep processes aside).
bool Listed(const ProcessSpec& p, double t) {
  if (t < p.start_s || (p.end_s && t >= *p.end_s)) return false;
  if (!p.pid_file.empty() && !BindPid(p)) return false;
  if (p.child_of_caller && !p.memory_of_bs && !BindChild(p, t)) return false;
  return true;
}

}  // namespace

std::vector<SweepBinding> BindSweep(const DeviceSpec& d, double t,
                                    const std::vector<Child>& children) {
  std::vector<SweepBinding> out;
  std::vector<const Child*> eligible;
  for (const Child& c : children) {
    if (c.sweep_value && SeesDevice(c, d.index, d.uuid)) eligible.push_back(&c);
  }
  double left = d.memory_total_bytes - d.memory_overhead_bytes;
  for (const ProcessSpec& p : d.processes) {
    if (!p.memory_of_bs && Listed(p, t)) left -= ProcessMemoryBytes(p, t);
  }
  std::size_t k = 0;
  for (const ProcessSpec& p : d.processes) {
    if (!p.memory_of_bs || t < p.start_s || (p.end_s && t >= *p.end_s)) continue;
    if (k >= eligible.size()) break;
    const Child& c = *eligible[k++];
    SweepBinding b{&p, c.pid, p.memory_of_bs->Evaluate(*c.sweep_value), 0};
    b.granted_bytes = std::clamp(left, 0.0, b.wanted_bytes);
    left -= b.granted_bytes;
    out.push_back(b);
  }
  return out;
}

std::vector<const ProcessSpec*> ActiveProcesses(const DeviceSpec& d, double t,
                                                const MigInstanceSpec* mig) {
  std::vector<const ProcessSpec*> out;
  std::vector<SweepBinding> sweep;
  if (std::any_of(d.processes.begin(), d.processes.end(),
                  [](const ProcessSpec& p) { return p.memory_of_bs.has_value(); })) {
    sweep = BindSweep(d, t, CallerChildren());
  }
  for (const ProcessSpec& p : d.processes) {
    if (p.memory_of_bs) {
      const auto b = std::find_if(sweep.begin(), sweep.end(),
                                  [&p](const SweepBinding& s) { return s.spec == &p; });
      if (b == sweep.end()) continue;
      if (b->pid != p.pid) {
        p.pid = b->pid;
        p.bound_at_s = t;
      }
      p.bound_bytes = b->granted_bytes;
    } else if (!Listed(p, t)) {
      continue;
    }
    if (mig != nullptr && (p.gi != mig->gi || p.ci.value_or(0) != mig->ci)) continue;
    out.push_back(&p);
  }
  return out;
}

double ProcessMemoryBytes(const ProcessSpec& p, double t) {
  if (p.memory_of_bs) return p.bound_bytes;
  return p.memory_bytes.Evaluate(Age(p, t));
}
double ProcessSmUtil(const ProcessSpec& p, double t) { return p.sm_util.Evaluate(Age(p, t)); }

double MemoryUsedBytes(const DeviceSpec& d, double t, const MigInstanceSpec* mig) {
  if (mig == nullptr && d.memory_used) return d.memory_used->Evaluate(t);
  const auto procs = ActiveProcesses(d, t, mig);
  double sum = 0;
  for (const ProcessSpec* p : procs) sum += ProcessMemoryBytes(*p, t);
  return procs.empty() ? sum : sum + d.memory_overhead_bytes;
}

double UtilizationGpu(const DeviceSpec& d, double t) {
  if (d.utilization_gpu) return d.utilization_gpu->Evaluate(t);
  double sum = 0;
  for (const ProcessSpec* p : ActiveProcesses(d, t)) sum += ProcessSmUtil(*p, t);
  return std::min(100.0, sum);
}

double UtilizationMemory(const DeviceSpec& d, double t) {
  if (d.utilization_memory) return d.utilization_memory->Evaluate(t);
  return std::round(UtilizationGpu(d, t) * 0.4);
}

bool Busy(const DeviceSpec& d, double t) {
  return UtilizationGpu(d, t) > 0 || !ActiveProcesses(d, t).empty();
}

double TemperatureGpuC(const DeviceSpec& d, double t) {
  if (d.temperature_gpu) return d.temperature_gpu->Evaluate(t);
  return std::round(d.traits.idle_temperature_c + 0.42 * std::min(100.0, UtilizationGpu(d, t)));
}

double TemperatureMemoryC(const DeviceSpec& d, double t) {
  if (d.temperature_memory) return d.temperature_memory->Evaluate(t);
  return TemperatureGpuC(d, t) + 2;
}

double PowerDrawW(const DeviceSpec& d, double t) {
  if (d.power_draw) return d.power_draw->Evaluate(t);
  const double util = std::min(100.0, UtilizationGpu(d, t)) / 100.0;
  return d.traits.idle_power_w + (d.power_limit_w * 0.88 - d.traits.idle_power_w) * util;
}

double PowerInstantW(const DeviceSpec& d, double t) {
  return d.power_instant ? d.power_instant->Evaluate(t) : PowerDrawW(d, t);
}

double PowerAverageW(const DeviceSpec& d, double t) {
  return d.power_average ? d.power_average->Evaluate(t) : PowerDrawW(d, t);
}

double ClockMhz(const DeviceSpec& d, int clock_type, double t) {
  const bool busy = Busy(d, t);
  switch (clock_type) {
    case NVML_CLOCK_GRAPHICS:
      if (d.clock_graphics) return d.clock_graphics->Evaluate(t);
      if (d.clock_sm) return d.clock_sm->Evaluate(t);
      return busy ? d.max_graphics_mhz : d.traits.idle_graphics_mhz;
    case NVML_CLOCK_SM:
      if (d.clock_sm) return d.clock_sm->Evaluate(t);
      return busy ? d.max_sm_mhz : d.traits.idle_sm_mhz;
    case NVML_CLOCK_MEM:
      if (d.clock_mem) return d.clock_mem->Evaluate(t);
      return busy || d.traits.idle_pstate == 0 ? d.max_mem_mhz : 405;
    default:
      if (d.clock_video) return d.clock_video->Evaluate(t);
      return busy ? d.max_video_mhz : d.traits.idle_video_mhz;
  }
}

int Pstate(const DeviceSpec& d, double t) {
  if (d.pstate) return static_cast<int>(ToUnsigned(d.pstate->Evaluate(t)));
  return Busy(d, t) ? 0 : static_cast<int>(d.traits.idle_pstate);
}

std::uint64_t ClockEventReasons(const DeviceSpec& d, double t) {
  if (d.clock_event_reasons) return ToULL(d.clock_event_reasons->Evaluate(t));
  return UtilizationGpu(d, t) > 0 ? 0 : 0x1;  // GPU idle
}

double EnergyMj(const DeviceSpec& d, const ScenarioTime& now, double period_t, EnergyCache& cache) {
  if (d.energy_mj) return d.energy_mj->Evaluate(now.t);
  const auto grid = static_cast<std::int64_t>(std::floor(now.t));
  if (grid < cache.grid_s) cache = EnergyCache{0, 0, cache.period_mj};
  for (; cache.grid_s < grid; ++cache.grid_s) {
    const auto k = static_cast<double>(cache.grid_s);
    cache.mj_at_grid += IntegratePower(d, k, k + 1);
  }
  double total = cache.mj_at_grid + IntegratePower(d, static_cast<double>(grid), now.t);
  if (now.cycle > 0) {
    if (cache.period_mj < 0) {
      cache.period_mj = 0;
      for (double k = 0; k < period_t; k += 1) {
        cache.period_mj += IntegratePower(d, k, std::min(k + 1, period_t));
      }
    }
    total += cache.period_mj * static_cast<double>(now.cycle);
  }
  return total;
}

}  // namespace gpuwatch::fake_nvml
