// Exported NVML entry points: framebuffer memory of a device or MIG instance.
#include <algorithm>

#include "device_model.h"
#include "fake_state.h"
#include "nvml_exports.h"

using gpuwatch::fake_nvml::CallContext;
using gpuwatch::fake_nvml::FakeNvml;
using gpuwatch::fake_nvml::MemoryUsedBytes;
using gpuwatch::fake_nvml::MigHandles;
using gpuwatch::fake_nvml::ToULL;

namespace {

struct MemoryReading {
  double total, reserved, used;  // bytes
};

MemoryReading Read(const CallContext& c) {
  if (c.mig != nullptr)
    return {c.mig->memory_total_bytes, 0, MemoryUsedBytes(*c.device, c.now.t, c.mig)};
  return {c.device->memory_total_bytes, c.device->memory_reserved.Evaluate(c.now.t),
          MemoryUsedBytes(*c.device, c.now.t)};
}

}  // namespace

extern "C" {

// v2 separates reserved memory; free = total - reserved - used, floored at 0
// (a scenario may report used > total on purpose).
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetMemoryInfo_v2", device,
      [&](const CallContext& c) {
        if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
        const MemoryReading m = Read(c);
        memory->total = ToULL(m.total);
        memory->reserved = ToULL(m.reserved);
        memory->used = ToULL(m.used);
        memory->free = ToULL(std::max(0.0, m.total - m.reserved - m.used));
        return NVML_SUCCESS;
      },
      MigHandles::kAccepted);
}

// v1 counts reserved memory as used, as the real v1 call does.
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetMemoryInfo", device,
      [&](const CallContext& c) {
        if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        const MemoryReading m = Read(c);
        memory->total = ToULL(m.total);
        memory->used = ToULL(m.used + m.reserved);
        memory->free = ToULL(std::max(0.0, m.total - m.reserved - m.used));
        return NVML_SUCCESS;
      },
      MigHandles::kAccepted);
}

}  // extern "C"
