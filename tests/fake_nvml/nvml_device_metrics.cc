// Exported NVML entry points: the dynamic readings of a device (utilization,
// temperature, power, energy, clocks, PCIe, ECC, row remapping).
#include "device_model.h"
#include "fake_state.h"
#include "nvml_exports.h"

namespace fake = gpuwatch::fake_nvml;
using fake::CallContext;
using fake::DeviceSpec;
using fake::FakeNvml;
using fake::ToULL;
using fake::ToUnsigned;

namespace {

template <typename Get>
nvmlReturn_t UnsignedReading(const char* call, nvmlDevice_t device, unsigned int* out, Get get) {
  return FakeNvml::Instance().DeviceCall(call, device, [&](const CallContext& c) {
    if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *out = ToUnsigned(get(*c.device, c.now.t));
    return NVML_SUCCESS;
  });
}

template <typename Get>
nvmlReturn_t MaskReading(const char* call, nvmlDevice_t device, unsigned long long* out, Get get) {
  return FakeNvml::Instance().DeviceCall(call, device, [&](const CallContext& c) {
    if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *out = get(*c.device, c.now.t);
    return NVML_SUCCESS;
  });
}

// Encoder/decoder utilization with the sampling period NVML reports (us).
nvmlReturn_t CodecUtilization(const char* call, nvmlDevice_t device, unsigned int* util,
                              unsigned int* period_us, fake::Series DeviceSpec::*series) {
  return FakeNvml::Instance().DeviceCall(call, device, [&](const CallContext& c) {
    if (util == nullptr || period_us == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *util = ToUnsigned((c.device->*series).Evaluate(c.now.t));
    *period_us = 167000;
    return NVML_SUCCESS;
  });
}

}  // namespace

extern "C" {

// NOT_SUPPORTED on a MIG-enabled GPU and on MIG handles, as on A100/H100.
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetUtilizationRates", device, [&](const CallContext& c) {
        if (utilization == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        if (c.device->mig_enabled) return NVML_ERROR_NOT_SUPPORTED;
        utilization->gpu = ToUnsigned(fake::UtilizationGpu(*c.device, c.now.t));
        utilization->memory = ToUnsigned(fake::UtilizationMemory(*c.device, c.now.t));
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int* util,
                                             unsigned int* period_us) {
  return CodecUtilization("nvmlDeviceGetEncoderUtilization", device, util, period_us,
                          &DeviceSpec::utilization_encoder);
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int* util,
                                             unsigned int* period_us) {
  return CodecUtilization("nvmlDeviceGetDecoderUtilization", device, util, period_us,
                          &DeviceSpec::utilization_decoder);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int* temp) {
  if (sensor != NVML_TEMPERATURE_GPU) {
    return FakeNvml::Instance().DeviceCall(
        "nvmlDeviceGetTemperature", device,
        [](const CallContext&) { return NVML_ERROR_INVALID_ARGUMENT; });
  }
  return UnsignedReading("nvmlDeviceGetTemperature", device, temp, fake::TemperatureGpuC);
}

// Per-entry results: memory temperature and power average/instant (mW).
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count, nvmlFieldValue_t* values) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetFieldValues", device, [&](const CallContext& c) {
        if (count < 0 || (count > 0 && values == nullptr)) return NVML_ERROR_INVALID_ARGUMENT;
        const DeviceSpec& d = *c.device;
        const auto stamp = static_cast<long long>(c.clock.TimestampUs(c.now));
        for (int i = 0; i < count; ++i) {
          nvmlFieldValue_t& v = values[i];
          v.timestamp = stamp;
          v.latencyUsec = 0;
          v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
          v.value.ullVal = 0;
          v.nvmlReturn = NVML_SUCCESS;
          switch (v.fieldId) {
            case NVML_FI_DEV_MEMORY_TEMP:
              if (d.has_memory_temperature) {
                v.value.uiVal = ToUnsigned(fake::TemperatureMemoryC(d, c.now.t));
              } else {
                v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
              }
              break;
            case NVML_FI_DEV_POWER_AVERAGE:
              v.value.uiVal = ToUnsigned(fake::PowerAverageW(d, c.now.t) * 1000.0);
              break;
            case NVML_FI_DEV_POWER_INSTANT:
              v.value.uiVal = ToUnsigned(fake::PowerInstantW(d, c.now.t) * 1000.0);
              break;
            default:
              v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
          }
        }
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power_mw) {
  return UnsignedReading(
      "nvmlDeviceGetPowerUsage", device, power_mw,
      [](const DeviceSpec& d, double t) { return fake::PowerDrawW(d, t) * 1000.0; });
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* mj) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetTotalEnergyConsumption", device, [&](const CallContext& c) {
        if (mj == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        const double period_t = c.scenario.period_s * c.scenario.time_scale;
        *mj = ToULL(fake::EnergyMj(*c.device, c.now, period_t, c.runtime->energy));
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, int* pstate) {
  return FakeNvml::Instance().DeviceCall("nvmlDeviceGetPerformanceState", device,
                                         [&](const CallContext& c) {
                                           if (pstate == nullptr)
                                             return NVML_ERROR_INVALID_ARGUMENT;
                                           *pstate = fake::Pstate(*c.device, c.now.t);
                                           return NVML_SUCCESS;
                                         });
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long* reasons) {
  return MaskReading("nvmlDeviceGetCurrentClocksEventReasons", device, reasons,
                     fake::ClockEventReasons);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long* reasons) {
  return MaskReading("nvmlDeviceGetCurrentClocksThrottleReasons", device, reasons,
                     fake::ClockEventReasons);
}

nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(nvmlDevice_t device,
                                                      unsigned long long* reasons) {
  return MaskReading("nvmlDeviceGetSupportedClocksEventReasons", device, reasons,
                     [](const DeviceSpec& d, double) { return d.supported_clock_event_reasons; });
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int* clock) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetClockInfo", device, [&](const CallContext& c) {
        if (clock == nullptr || type < NVML_CLOCK_GRAPHICS || type > NVML_CLOCK_VIDEO) {
          return NVML_ERROR_INVALID_ARGUMENT;
        }
        *clock = ToUnsigned(fake::ClockMhz(*c.device, type, c.now.t));
        return NVML_SUCCESS;
      });
}

// NOT_SUPPORTED unless the scenario (or the model) gives the GPU a fan.
nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int* speed) {
  return FakeNvml::Instance().DeviceCall("nvmlDeviceGetFanSpeed", device,
                                         [&](const CallContext& c) {
                                           if (speed == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                                           if (!c.device->fan) return NVML_ERROR_NOT_SUPPORTED;
                                           *speed = ToUnsigned(c.device->fan->Evaluate(c.now.t));
                                           return NVML_SUCCESS;
                                         });
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, int counter, unsigned int* kbps) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetPcieThroughput", device, [&](const CallContext& c) {
        if (kbps == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        if (counter == NVML_PCIE_UTIL_TX_BYTES) {
          *kbps = ToUnsigned(c.device->pcie_tx_kbps.Evaluate(c.now.t));
        } else if (counter == NVML_PCIE_UTIL_RX_BYTES) {
          *kbps = ToUnsigned(c.device->pcie_rx_kbps.Evaluate(c.now.t));
        } else {
          return NVML_ERROR_INVALID_ARGUMENT;
        }
        return NVML_SUCCESS;
      });
}

// NOT_SUPPORTED while ECC is disabled.
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int error_type, int counter_type,
                                         unsigned long long* count) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetTotalEccErrors", device, [&](const CallContext& c) {
        if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        if (!c.device->ecc_mode) return NVML_ERROR_NOT_SUPPORTED;
        const fake::EccCounters& e = c.device->ecc;
        const bool corrected = error_type == NVML_MEMORY_ERROR_TYPE_CORRECTED;
        if (!corrected && error_type != NVML_MEMORY_ERROR_TYPE_UNCORRECTED) {
          return NVML_ERROR_INVALID_ARGUMENT;
        }
        if (counter_type == NVML_VOLATILE_ECC) {
          *count =
              ToULL((corrected ? e.corrected_volatile : e.uncorrected_volatile).Evaluate(c.now.t));
        } else if (counter_type == NVML_AGGREGATE_ECC) {
          *count = ToULL(
              (corrected ? e.corrected_aggregate : e.uncorrected_aggregate).Evaluate(c.now.t));
        } else {
          return NVML_ERROR_INVALID_ARGUMENT;
        }
        return NVML_SUCCESS;
      });
}

// NOT_SUPPORTED on models without row remapping (before Ampere, and L40S).
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int* correctable,
                                       unsigned int* uncorrectable, unsigned int* pending,
                                       unsigned int* failure) {
  return FakeNvml::Instance().DeviceCall(
      "nvmlDeviceGetRemappedRows", device, [&](const CallContext& c) {
        if (correctable == nullptr || uncorrectable == nullptr || pending == nullptr ||
            failure == nullptr) {
          return NVML_ERROR_INVALID_ARGUMENT;
        }
        if (!c.device->traits.row_remapping) return NVML_ERROR_NOT_SUPPORTED;
        const fake::RemappedRows& r = c.device->remapped_rows;
        *correctable = ToUnsigned(r.correctable.Evaluate(c.now.t));
        *uncorrectable = ToUnsigned(r.uncorrectable.Evaluate(c.now.t));
        *pending = r.pending ? 1 : 0;
        *failure = r.failure ? 1 : 0;
        return NVML_SUCCESS;
      });
}

}  // extern "C"
