// Exported NVML entry points that gpuwatch never calls but other monitors do,
// so that they run on the fake too and can be measured beside gpuwatch on the
// same simulated devices (bench/tui_memory.py: nvtop resolves every one of its
// entry points with dlsym and monitors nothing if one is missing).
#include <cstddef>
#include <cstring>

#include "backends/nvml/nvml_api.h"
#include "device_model.h"
#include "fake_state.h"

using gpuwatch::fake_nvml::CallContext;
using gpuwatch::fake_nvml::FakeNvml;

namespace {

// The first nvmlPciInfo_t (before _v2): where the later one keeps
// busIdLegacy it keeps its only bus id, then the same five numbers, then four
// reserved words where the later one has its long bus id.
struct PciInfoV1 {
  char busId[16];
  unsigned int numbers[5];
  unsigned int reserved[4];
};
static_assert(sizeof(PciInfoV1) == 52 && offsetof(nvmlPciInfo_t, busId) == 36);

}  // namespace

extern "C" {
#pragma GCC visibility push(default)

nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, PciInfoV1* pci) {
  return FakeNvml::Instance().DeviceCall("nvmlDeviceGetPciInfo", device, [&](const CallContext& c) {
    if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlPciInfo_t full;
    gpuwatch::fake_nvml::FillPciInfo(*c.device, full);
    std::memset(pci, 0, sizeof *pci);
    std::memcpy(pci, &full, offsetof(nvmlPciInfo_t, busId));
    return NVML_SUCCESS;
  });
}

// Scenarios do not model thresholds: the answer a driver gives for a sensor
// the board lacks.
nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device, int /*threshold*/,
                                               unsigned int* temp) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetTemperatureThreshold", device, [&](const CallContext&) {
        return temp == nullptr ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
      });
}

#pragma GCC visibility pop
}
