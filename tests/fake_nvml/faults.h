// Which scenario faults apply to a call: pure functions of the scenario, the
// call name, the device and scenario time.
#pragma once

#include <optional>
#include <string_view>

#include "backends/nvml/nvml_api.h"
#include "scenario.h"

namespace gpuwatch::fake_nvml {

struct FaultDecision {
  nvmlReturn_t code = NVML_SUCCESS;  // returned instead of the real answer
  double slow_ms = 0;                // sleep, then answer
  bool hang = false;                 // block until hang_until_s or hang_ms, then answer
  double hang_ms = 0;
  std::optional<double> hang_until_s;
};

bool FaultActive(const FaultSpec& fault, double t);

// `device` is absent for calls not about a device (nvmlSystemGet*, GetCount).
// `lost_applies` is false for nvmlDeviceGetHandleByIndex, which succeeds on a
// lost GPU as the real driver does.
FaultDecision CheckFaults(const Scenario& scenario, std::string_view call,
                          std::optional<unsigned> device, double t, bool lost_applies);

// Extra short-lived processes of an active process_list_race on `device`, or 0.
unsigned RaceExtra(const Scenario& scenario, unsigned device, double t);

}  // namespace gpuwatch::fake_nvml
