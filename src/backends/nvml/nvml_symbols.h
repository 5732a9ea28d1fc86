// The one list of NVML entry points gpuwatch uses: X(name, return, params).
// The loader resolves each with dlsym; the fake library defines each one with
// exactly this signature. A missing symbol disables the fields that need it.
#pragma once

#include "backends/nvml/nvml_api.h"

#define GPUWATCH_NVML_SYMBOLS(X)                                                                  \
  X(nvmlInit_v2, nvmlReturn_t, (void))                                                            \
  X(nvmlInit, nvmlReturn_t, (void))                                                               \
  X(nvmlShutdown, nvmlReturn_t, (void))                                                           \
  X(nvmlErrorString, const char*, (nvmlReturn_t))                                                 \
  X(nvmlSystemGetDriverVersion, nvmlReturn_t, (char*, unsigned int))                              \
  X(nvmlSystemGetNVMLVersion, nvmlReturn_t, (char*, unsigned int))                                \
  X(nvmlSystemGetCudaDriverVersion_v2, nvmlReturn_t, (int*))                                      \
  X(nvmlSystemGetCudaDriverVersion, nvmlReturn_t, (int*))                                         \
  X(nvmlDeviceGetCount_v2, nvmlReturn_t, (unsigned int*))                                         \
  X(nvmlDeviceGetCount, nvmlReturn_t, (unsigned int*))                                            \
  X(nvmlDeviceGetHandleByIndex_v2, nvmlReturn_t, (unsigned int, nvmlDevice_t*))                   \
  X(nvmlDeviceGetHandleByIndex, nvmlReturn_t, (unsigned int, nvmlDevice_t*))                      \
  X(nvmlDeviceGetIndex, nvmlReturn_t, (nvmlDevice_t, unsigned int*))                              \
  X(nvmlDeviceGetName, nvmlReturn_t, (nvmlDevice_t, char*, unsigned int))                         \
  X(nvmlDeviceGetUUID, nvmlReturn_t, (nvmlDevice_t, char*, unsigned int))                         \
  X(nvmlDeviceGetSerial, nvmlReturn_t, (nvmlDevice_t, char*, unsigned int))                       \
  X(nvmlDeviceGetVbiosVersion, nvmlReturn_t, (nvmlDevice_t, char*, unsigned int))                 \
  X(nvmlDeviceGetPciInfo_v3, nvmlReturn_t, (nvmlDevice_t, nvmlPciInfo_t*))                        \
  X(nvmlDeviceGetPciInfo_v2, nvmlReturn_t, (nvmlDevice_t, nvmlPciInfo_t*))                        \
  X(nvmlDeviceGetCudaComputeCapability, nvmlReturn_t, (nvmlDevice_t, int*, int*))                 \
  X(nvmlDeviceGetMemoryInfo_v2, nvmlReturn_t, (nvmlDevice_t, nvmlMemory_v2_t*))                   \
  X(nvmlDeviceGetMemoryInfo, nvmlReturn_t, (nvmlDevice_t, nvmlMemory_t*))                         \
  X(nvmlDeviceGetBAR1MemoryInfo, nvmlReturn_t, (nvmlDevice_t, nvmlBAR1Memory_t*))                 \
  X(nvmlDeviceGetPowerManagementLimit, nvmlReturn_t, (nvmlDevice_t, unsigned int*))               \
  X(nvmlDeviceGetPowerManagementDefaultLimit, nvmlReturn_t, (nvmlDevice_t, unsigned int*))        \
  X(nvmlDeviceGetEnforcedPowerLimit, nvmlReturn_t, (nvmlDevice_t, unsigned int*))                 \
  X(nvmlDeviceGetPowerManagementLimitConstraints, nvmlReturn_t,                                   \
    (nvmlDevice_t, unsigned int*, unsigned int*))                                                 \
  X(nvmlDeviceGetMaxClockInfo, nvmlReturn_t, (nvmlDevice_t, int, unsigned int*))                  \
  X(nvmlDeviceGetClockInfo, nvmlReturn_t, (nvmlDevice_t, int, unsigned int*))                     \
  X(nvmlDeviceGetMigMode, nvmlReturn_t, (nvmlDevice_t, unsigned int*, unsigned int*))             \
  X(nvmlDeviceGetPersistenceMode, nvmlReturn_t, (nvmlDevice_t, int*))                             \
  X(nvmlDeviceGetDisplayMode, nvmlReturn_t, (nvmlDevice_t, int*))                                 \
  X(nvmlDeviceGetDisplayActive, nvmlReturn_t, (nvmlDevice_t, int*))                               \
  X(nvmlDeviceGetComputeMode, nvmlReturn_t, (nvmlDevice_t, int*))                                 \
  X(nvmlDeviceGetEccMode, nvmlReturn_t, (nvmlDevice_t, int*, int*))                               \
  X(nvmlDeviceGetMaxPcieLinkGeneration, nvmlReturn_t, (nvmlDevice_t, unsigned int*))              \
  X(nvmlDeviceGetMaxPcieLinkWidth, nvmlReturn_t, (nvmlDevice_t, unsigned int*))                   \
  X(nvmlDeviceGetCurrPcieLinkGeneration, nvmlReturn_t, (nvmlDevice_t, unsigned int*))             \
  X(nvmlDeviceGetCurrPcieLinkWidth, nvmlReturn_t, (nvmlDevice_t, unsigned int*))                  \
  X(nvmlDeviceGetUtilizationRates, nvmlReturn_t, (nvmlDevice_t, nvmlUtilization_t*))              \
  X(nvmlDeviceGetEncoderUtilization, nvmlReturn_t, (nvmlDevice_t, unsigned int*, unsigned int*))  \
  X(nvmlDeviceGetDecoderUtilization, nvmlReturn_t, (nvmlDevice_t, unsigned int*, unsigned int*))  \
  X(nvmlDeviceGetTemperature, nvmlReturn_t, (nvmlDevice_t, int, unsigned int*))                   \
  X(nvmlDeviceGetFieldValues, nvmlReturn_t, (nvmlDevice_t, int, nvmlFieldValue_t*))               \
  X(nvmlDeviceGetPowerUsage, nvmlReturn_t, (nvmlDevice_t, unsigned int*))                         \
  X(nvmlDeviceGetTotalEnergyConsumption, nvmlReturn_t, (nvmlDevice_t, unsigned long long*))       \
  X(nvmlDeviceGetPerformanceState, nvmlReturn_t, (nvmlDevice_t, int*))                            \
  X(nvmlDeviceGetCurrentClocksEventReasons, nvmlReturn_t, (nvmlDevice_t, unsigned long long*))    \
  X(nvmlDeviceGetCurrentClocksThrottleReasons, nvmlReturn_t, (nvmlDevice_t, unsigned long long*)) \
  X(nvmlDeviceGetSupportedClocksEventReasons, nvmlReturn_t, (nvmlDevice_t, unsigned long long*))  \
  X(nvmlDeviceGetFanSpeed, nvmlReturn_t, (nvmlDevice_t, unsigned int*))                           \
  X(nvmlDeviceGetPcieThroughput, nvmlReturn_t, (nvmlDevice_t, int, unsigned int*))                \
  X(nvmlDeviceGetTotalEccErrors, nvmlReturn_t, (nvmlDevice_t, int, int, unsigned long long*))     \
  X(nvmlDeviceGetRemappedRows, nvmlReturn_t,                                                      \
    (nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*, unsigned int*))                   \
  X(nvmlDeviceGetComputeRunningProcesses_v3, nvmlReturn_t,                                        \
    (nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*))                                            \
  X(nvmlDeviceGetComputeRunningProcesses_v2, nvmlReturn_t,                                        \
    (nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*))                                            \
  X(nvmlDeviceGetComputeRunningProcesses, nvmlReturn_t,                                           \
    (nvmlDevice_t, unsigned int*, nvmlProcessInfo_v1_t*))                                         \
  X(nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlReturn_t,                                       \
    (nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*))                                            \
  X(nvmlDeviceGetGraphicsRunningProcesses_v2, nvmlReturn_t,                                       \
    (nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*))                                            \
  X(nvmlDeviceGetGraphicsRunningProcesses, nvmlReturn_t,                                          \
    (nvmlDevice_t, unsigned int*, nvmlProcessInfo_v1_t*))                                         \
  X(nvmlDeviceGetProcessUtilization, nvmlReturn_t,                                                \
    (nvmlDevice_t, nvmlProcessUtilizationSample_t*, unsigned int*, unsigned long long))           \
  X(nvmlDeviceGetMaxMigDeviceCount, nvmlReturn_t, (nvmlDevice_t, unsigned int*))                  \
  X(nvmlDeviceGetMigDeviceHandleByIndex, nvmlReturn_t,                                            \
    (nvmlDevice_t, unsigned int, nvmlDevice_t*))                                                  \
  X(nvmlDeviceGetGpuInstanceId, nvmlReturn_t, (nvmlDevice_t, unsigned int*))                      \
  X(nvmlDeviceGetComputeInstanceId, nvmlReturn_t, (nvmlDevice_t, unsigned int*))                  \
  X(nvmlDeviceGetSamples, nvmlReturn_t,                                                           \
    (nvmlDevice_t, int, unsigned long long, int*, unsigned int*, nvmlSample_t*))                  \
  X(nvmlEventSetCreate, nvmlReturn_t, (nvmlEventSet_t*))                                          \
  X(nvmlDeviceRegisterEvents, nvmlReturn_t, (nvmlDevice_t, unsigned long long, nvmlEventSet_t))   \
  X(nvmlEventSetWait_v2, nvmlReturn_t, (nvmlEventSet_t, nvmlEventData_t*, unsigned int))          \
  X(nvmlEventSetFree, nvmlReturn_t, (nvmlEventSet_t))

// Declares every symbol with its exact C signature (used by the fake library so
// the compiler checks its definitions against the list).
#define GPUWATCH_NVML_DECLARE(name, ret, params) ret name params;
