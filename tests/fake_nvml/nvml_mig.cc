// Exported NVML entry points: MIG mode, MIG device handles and instance ids.
// A MIG-capable GPU (A100, H100, H200) with MIG off answers mode queries;
// other models answer NOT_SUPPORTED.
#include "fake_state.h"
#include "nvml_exports.h"

using gpuwatch::fake_nvml::CallContext;
using gpuwatch::fake_nvml::FakeNvml;
using gpuwatch::fake_nvml::MigHandles;

namespace {
constexpr unsigned kMaxMigDevices = 7;
}  // namespace

extern "C" {

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current,
                                  unsigned int* pending) {
  return FakeNvml::Instance().DeviceCall("nvmlDeviceGetMigMode", device, [&](const CallContext& c) {
    if (current == nullptr || pending == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (!c.device->traits.mig_capable) return NVML_ERROR_NOT_SUPPORTED;
    *current = *pending = c.device->mig_enabled ? 1u : 0u;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  return FakeNvml::Instance().DeviceCall("nvmlDeviceGetMaxMigDeviceCount", device,
                                         [&](const CallContext& c) {
                                           if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                                           if (!c.device->traits.mig_capable)
                                             return NVML_ERROR_NOT_SUPPORTED;
                                           *count = c.device->mig_enabled ? kMaxMigDevices : 0;
                                           return NVML_SUCCESS;
                                         });
}

// NOT_FOUND for an index below 7 with no instance behind it.
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t* mig_device) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetMigDeviceHandleByIndex", device, [&](const CallContext& c) {
        if (mig_device == nullptr || index >= kMaxMigDevices) return NVML_ERROR_INVALID_ARGUMENT;
        if (!c.device->mig_enabled) return NVML_ERROR_NOT_SUPPORTED;
        if (index >= c.device->mig_instances.size()) return NVML_ERROR_NOT_FOUND;
        *mig_device = c.owner->HandleLocked(c.device_index, static_cast<int>(index));
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetGpuInstanceId", device,
      [&](const CallContext& c) {
        if (id == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        if (c.mig == nullptr) return NVML_ERROR_NOT_SUPPORTED;
        *id = c.mig->gi;
        return NVML_SUCCESS;
      },
      MigHandles::kAccepted);
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetComputeInstanceId", device,
      [&](const CallContext& c) {
        if (id == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        if (c.mig == nullptr) return NVML_ERROR_NOT_SUPPORTED;
        *id = c.mig->ci;
        return NVML_SUCCESS;
      },
      MigHandles::kAccepted);
}

}  // extern "C"
