// Exported NVML entry points: identity and static configuration of a device.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "device_model.h"
#include "fake_state.h"
#include "nvml_errors.h"
#include "nvml_exports.h"

using gpuwatch::fake_nvml::CallContext;
using gpuwatch::fake_nvml::CopyString;
using gpuwatch::fake_nvml::DeviceSpec;
using gpuwatch::fake_nvml::FakeNvml;
using gpuwatch::fake_nvml::MigHandles;
using gpuwatch::fake_nvml::ToULL;
using gpuwatch::fake_nvml::ToUnsigned;

namespace {

// A query of one unsigned value taken from the spec and t. Rejects MIG handles.
template <typename Get>
nvmlReturn_t UnsignedQuery(const char* call, nvmlDevice_t device, unsigned int* out, Get get) {
  return FakeNvml::Instance().DeviceCall(call, device, [&](const CallContext& c) {
    if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *out = get(*c.device, c.now.t);
    return NVML_SUCCESS;
  });
}

unsigned MilliWatts(double w) { return ToUnsigned(w * 1000.0); }

}  // namespace

extern "C" {

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetName", device,
      [&](const CallContext& c) {
        std::string text = c.device->name;
        if (c.mig != nullptr) text += " MIG " + c.mig->profile;
        return CopyString(text, name, length);
      },
      MigHandles::kAccepted);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetUUID", device,
      [&](const CallContext& c) {
        return CopyString(c.mig != nullptr ? c.mig->uuid : c.device->uuid, uuid, length);
      },
      MigHandles::kAccepted);
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial, unsigned int length) {
  return FakeNvml::Instance().DeviceCall("nvmlDeviceGetSerial", device, [&](const CallContext& c) {
    return CopyString(c.device->serial, serial, length);
  });
}

nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char* version, unsigned int length) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetVbiosVersion", device,
      [&](const CallContext& c) { return CopyString(c.device->vbios, version, length); });
}

static nvmlReturn_t PciInfo(const char* call, nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return FakeNvml::Instance().DeviceCall(
      call, device,
      [&](const CallContext& c) {
        if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        gpuwatch::fake_nvml::FillPciInfo(*c.device, *pci);
        return NVML_SUCCESS;
      },
      MigHandles::kAccepted);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return PciInfo("nvmlDeviceGetPciInfo_v3", device, pci);
}
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return PciInfo("nvmlDeviceGetPciInfo_v2", device, pci);
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetCudaComputeCapability", device,
      [&](const CallContext& c) {
        if (major == nullptr || minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        *major = c.device->cc_major;
        *minor = c.device->cc_minor;
        return NVML_SUCCESS;
      },
      MigHandles::kAccepted);
}

nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t* bar1) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetBAR1MemoryInfo", device, [&](const CallContext& c) {
        if (bar1 == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        const double total = c.device->bar1_total_bytes;
        const double used = std::min(total, c.device->bar1_used.Evaluate(c.now.t));
        bar1->bar1Total = ToULL(total);
        bar1->bar1Used = ToULL(used);
        bar1->bar1Free = ToULL(total - used);
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* limit) {
  return UnsignedQuery("nvmlDeviceGetPowerManagementLimit", device, limit,
                       [](const DeviceSpec& d, double) { return MilliWatts(d.power_limit_w); });
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int* limit) {
  return UnsignedQuery("nvmlDeviceGetPowerManagementDefaultLimit", device, limit,
                       [](const DeviceSpec& d, double) { return MilliWatts(d.power_default_w); });
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  return UnsignedQuery("nvmlDeviceGetEnforcedPowerLimit", device, limit,
                       [](const DeviceSpec& d, double) { return MilliWatts(d.power_enforced_w); });
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                          unsigned int* min_limit,
                                                          unsigned int* max_limit) {
  return FakeNvml::Instance().DeviceCall("nvmlDeviceGetPowerManagementLimitConstraints", device,
                                         [&](const CallContext& c) {
                                           if (min_limit == nullptr || max_limit == nullptr)
                                             return NVML_ERROR_INVALID_ARGUMENT;
                                           *min_limit = MilliWatts(c.device->power_min_w);
                                           *max_limit = MilliWatts(c.device->power_max_w);
                                           return NVML_SUCCESS;
                                         });
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, int type, unsigned int* clock) {
  return FakeNvml::Instance().DeviceCall("nvmlDeviceGetMaxClockInfo", device,
                                         [&](const CallContext& c) {
                                           if (clock == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                                           const DeviceSpec& d = *c.device;
                                           switch (type) {
                                             case NVML_CLOCK_GRAPHICS:
                                               *clock = d.max_graphics_mhz;
                                               break;
                                             case NVML_CLOCK_SM:
                                               *clock = d.max_sm_mhz;
                                               break;
                                             case NVML_CLOCK_MEM:
                                               *clock = d.max_mem_mhz;
                                               break;
                                             case NVML_CLOCK_VIDEO:
                                               *clock = d.max_video_mhz;
                                               break;
                                             default:
                                               return NVML_ERROR_INVALID_ARGUMENT;
                                           }
                                           return NVML_SUCCESS;
                                         });
}

static nvmlReturn_t EnableState(const char* call, nvmlDevice_t device, int* mode,
                                bool DeviceSpec::*field) {
  return FakeNvml::Instance().DeviceCall(call, device, [&](const CallContext& c) {
    if (mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *mode = c.device->*field ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, int* mode) {
  return EnableState("nvmlDeviceGetPersistenceMode", device, mode, &DeviceSpec::persistence_mode);
}

nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t device, int* active) {
  return EnableState("nvmlDeviceGetDisplayActive", device, active, &DeviceSpec::display_active);
}

// Absent from the scenario: deprecated, as driver 580 answers on an H200.
nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t device, int* mode) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetDisplayMode", device, [&](const CallContext& c) {
        if (mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        if (!c.device->display_mode) return gpuwatch::fake_nvml::kNvmlErrorDeprecated;
        *mode = *c.device->display_mode ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, int* mode) {
  return FakeNvml::Instance().DeviceCall("nvmlDeviceGetComputeMode", device,
                                         [&](const CallContext& c) {
                                           if (mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                                           *mode = c.device->compute_mode;
                                           return NVML_SUCCESS;
                                         });
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, int* current, int* pending) {
  return FakeNvml::Instance().DeviceCall("nvmlDeviceGetEccMode", device, [&](const CallContext& c) {
    if (current == nullptr || pending == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *current = *pending = c.device->ecc_mode ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* gen) {
  return UnsignedQuery("nvmlDeviceGetMaxPcieLinkGeneration", device, gen,
                       [](const DeviceSpec& d, double) { return d.pcie_gen_max; });
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* width) {
  return UnsignedQuery("nvmlDeviceGetMaxPcieLinkWidth", device, width,
                       [](const DeviceSpec& d, double) { return d.pcie_width_max; });
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* gen) {
  return UnsignedQuery("nvmlDeviceGetCurrPcieLinkGeneration", device, gen,
                       [](const DeviceSpec& d, double) { return d.pcie_gen_current; });
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* width) {
  return UnsignedQuery("nvmlDeviceGetCurrPcieLinkWidth", device, width,
                       [](const DeviceSpec& d, double) { return d.pcie_width_current; });
}

}  // extern "C"
