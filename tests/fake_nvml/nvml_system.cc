// Exported NVML entry points: init, errors, system queries, device count and
// handles.
#include <string>

#include "fake_state.h"
#include "nvml_errors.h"
#include "nvml_exports.h"

using gpuwatch::fake_nvml::CallContext;
using gpuwatch::fake_nvml::CopyString;
using gpuwatch::fake_nvml::FakeNvml;

extern "C" {

nvmlReturn_t nvmlInit_v2(void) { return FakeNvml::Instance().Init(); }
nvmlReturn_t nvmlInit(void) { return FakeNvml::Instance().Init(); }
nvmlReturn_t nvmlShutdown(void) { return FakeNvml::Instance().Shutdown(); }

const char* nvmlErrorString(nvmlReturn_t result) { return gpuwatch::fake_nvml::ErrorText(result); }

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return FakeNvml::Instance().SystemCall("nvmlSystemGetDriverVersion", [&](const CallContext& c) {
    return CopyString(c.scenario.driver_version, version, length);
  });
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  return FakeNvml::Instance().SystemCall("nvmlSystemGetNVMLVersion", [&](const CallContext& c) {
    return CopyString(c.scenario.nvml_version, version, length);
  });
}

static nvmlReturn_t CudaDriverVersion(const char* call, int* version) {
  return FakeNvml::Instance().SystemCall(call, [&](const CallContext& c) {
    if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *version = c.scenario.cuda_driver_version;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
  return CudaDriverVersion("nvmlSystemGetCudaDriverVersion_v2", version);
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  return CudaDriverVersion("nvmlSystemGetCudaDriverVersion", version);
}

static nvmlReturn_t DeviceCount(const char* call, unsigned int* count) {
  return FakeNvml::Instance().SystemCall(call, [&](const CallContext& c) {
    if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *count = static_cast<unsigned>(c.scenario.devices.size());
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  return DeviceCount("nvmlDeviceGetCount_v2", count);
}
nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) {
  return DeviceCount("nvmlDeviceGetCount", count);
}

// Succeeds on a lost GPU, as the real driver does; calls on the handle fail.
static nvmlReturn_t HandleByIndex(const char* call, unsigned int index, nvmlDevice_t* device) {
  return FakeNvml::Instance().SystemCall(
      call,
      [&](const CallContext& c) {
        if (device == nullptr || index >= c.scenario.devices.size()) {
          return NVML_ERROR_INVALID_ARGUMENT;
        }
        *device = c.owner->HandleLocked(index, -1);
        return NVML_SUCCESS;
      },
      index);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return HandleByIndex("nvmlDeviceGetHandleByIndex_v2", index, device);
}
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return HandleByIndex("nvmlDeviceGetHandleByIndex", index, device);
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  return FakeNvml::Instance().DeviceCall("nvmlDeviceGetIndex", device, [&](const CallContext& c) {
    if (index == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *index = c.device_index;
    return NVML_SUCCESS;
  });
}

}  // extern "C"
