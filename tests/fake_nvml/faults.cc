#include "faults.h"

#include <algorithm>

namespace gpuwatch::fake_nvml {
namespace {

bool AppliesToDevice(const FaultSpec& f, std::optional<unsigned> device) {
  return !f.device || (device && *f.device == *device);
}

bool Names(const FaultSpec& f, std::string_view call) {
  return std::find(f.calls.begin(), f.calls.end(), call) != f.calls.end();
}

}  // namespace

bool FaultActive(const FaultSpec& fault, double t) {
  return t >= fault.from_s && (!fault.until_s || t < *fault.until_s);
}

FaultDecision CheckFaults(const Scenario& scenario, std::string_view call,
                          std::optional<unsigned> device, double t, bool lost_applies) {
  FaultDecision d;
  nvmlReturn_t lost = NVML_SUCCESS, error = NVML_SUCCESS, unsupported = NVML_SUCCESS;
  for (const FaultSpec& f : scenario.faults) {
    if (!AppliesToDevice(f, device) || !FaultActive(f, t)) continue;
    switch (f.kind) {
      case FaultKind::kLost:
        if (device && lost_applies) lost = NVML_ERROR_GPU_IS_LOST;
        break;
      case FaultKind::kNotSupported:
        if (Names(f, call)) unsupported = NVML_ERROR_NOT_SUPPORTED;
        break;
      case FaultKind::kError:
        if (Names(f, call) && error == NVML_SUCCESS) error = f.code;
        break;
      case FaultKind::kSlow:
        if (Names(f, call)) d.slow_ms += f.ms;
        break;
      case FaultKind::kHang:
        if (Names(f, call) && !d.hang) {
          d.hang = true;
          d.hang_ms = f.ms;
          d.hang_until_s = f.until_s;
        }
        break;
      case FaultKind::kProcessListRace:
        break;
    }
  }
  d.code = lost != NVML_SUCCESS ? lost : error != NVML_SUCCESS ? error : unsupported;
  return d;
}

unsigned RaceExtra(const Scenario& scenario, unsigned device, double t) {
  unsigned extra = 0;
  for (const FaultSpec& f : scenario.faults) {
    if (f.kind == FaultKind::kProcessListRace && AppliesToDevice(f, device) && FaultActive(f, t)) {
      extra += f.extra;
    }
  }
  return extra;
}

}  // namespace gpuwatch::fake_nvml
