// What a device reports at scenario time t: the scenario's series where given,
// else the derived defaults (memory from processes, utilization from process
// SM use, power/temperature/clocks from utilization). Pure functions of the
// spec and t, except the energy integral, which caches into an EnergyCache.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/nvml/nvml_api.h"
#include "children.h"
#include "fake_clock.h"
#include "scenario.h"

namespace gpuwatch::fake_nvml {

// The processes listed at t. `mig` filters to one MIG instance (nullptr: all).
std::vector<const ProcessSpec*> ActiveProcesses(const DeviceSpec& d, double t,
                                                const MigInstanceSpec* mig = nullptr);

double ProcessMemoryBytes(const ProcessSpec& p, double t);

// The sweep processes of `d` (memory_of_bs) bound at t to `children`, which
// are a caller's (ChildrenOf): in order, what each wants for its child's value
// and what the device grants after the other processes and the ones before.
struct SweepBinding {
  const ProcessSpec* spec = nullptr;
  unsigned pid = 0;
  double wanted_bytes = 0;
  double granted_bytes = 0;
};
std::vector<SweepBinding> BindSweep(const DeviceSpec& d, double t,
                                    const std::vector<Child>& children);
double ProcessSmUtil(const ProcessSpec& p, double t);

// Used bytes of the device (or of one MIG instance).
double MemoryUsedBytes(const DeviceSpec& d, double t, const MigInstanceSpec* mig = nullptr);

double UtilizationGpu(const DeviceSpec& d, double t);
double UtilizationMemory(const DeviceSpec& d, double t);
bool Busy(const DeviceSpec& d, double t);
double TemperatureGpuC(const DeviceSpec& d, double t);
double TemperatureMemoryC(const DeviceSpec& d, double t);  // requires has_memory_temperature
double PowerDrawW(const DeviceSpec& d, double t);
double PowerInstantW(const DeviceSpec& d, double t);
double PowerAverageW(const DeviceSpec& d, double t);
// clock_type: NVML_CLOCK_GRAPHICS, _SM, _MEM or _VIDEO.
double ClockMhz(const DeviceSpec& d, int clock_type, double t);
int Pstate(const DeviceSpec& d, double t);
std::uint64_t ClockEventReasons(const DeviceSpec& d, double t);

// Integral of power on a fixed 1 s grid, so the same t always gives the same
// value whatever was asked before.
struct EnergyCache {
  std::int64_t grid_s = 0;  // integral is known up to this whole second
  double mj_at_grid = 0;
  double period_mj = -1;  // one whole wall-clock period, computed once
};

// Total energy in mJ: the `energy` series if given, else integrated power.
// Monotonic across wall-clock periods (adds `cycle` whole periods).
double EnergyMj(const DeviceSpec& d, const ScenarioTime& now, double period_t, EnergyCache& cache);

// Rounds and clamps a series value into an unsigned NVML field.
// The device's PCI address and ids, as nvmlPciInfo_t holds them (the first
// nvmlPciInfo_t is its first 36 bytes, its bus id where busIdLegacy is).
void FillPciInfo(const DeviceSpec& d, nvmlPciInfo_t& pci);

unsigned ToUnsigned(double value);
unsigned long long ToULL(double value);

}  // namespace gpuwatch::fake_nvml
