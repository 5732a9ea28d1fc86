#include "backends/nvml/nvml_probes.h"

#include <fmt/format.h>

#include "backends/nvml/nvml_errors.h"

namespace gpuwatch::nvml {
namespace {

using F = FieldId;
constexpr nvmlReturn_t kNoSymbol = NVML_ERROR_FUNCTION_NOT_FOUND;

void Num(ProbeContext& c, FieldId id, double v) { c.out[id] = Reading::Number(v); }

// Calls `fn(device, char*, len)` and stores the text.
template <typename Fn>
nvmlReturn_t ReadText(ProbeContext& c, Fn fn, FieldId id, unsigned len) {
  if (fn == nullptr) return kNoSymbol;
  char buf[128] = {};
  const nvmlReturn_t rc = fn(c.device, buf, std::min<unsigned>(len, sizeof buf));
  if (rc == NVML_SUCCESS) c.out[id] = Reading::Text(buf);
  return rc;
}

template <typename T, typename Fn>
nvmlReturn_t ReadOne(ProbeContext& c, Fn fn, FieldId id, double scale) {
  if (fn == nullptr) return kNoSymbol;
  T v{};
  const nvmlReturn_t rc = fn(c.device, &v);
  if (rc == NVML_SUCCESS) Num(c, id, static_cast<double>(v) * scale);
  return rc;
}

nvmlReturn_t ReadClock(ProbeContext& c, bool max, int clock, FieldId id) {
  auto fn = max ? c.lib.api().nvmlDeviceGetMaxClockInfo : c.lib.api().nvmlDeviceGetClockInfo;
  if (fn == nullptr) return kNoSymbol;
  unsigned mhz = 0;
  const nvmlReturn_t rc = fn(c.device, clock, &mhz);
  if (rc == NVML_SUCCESS) Num(c, id, mhz * 1e6);
  return rc;
}

nvmlReturn_t ReadEcc(ProbeContext& c, int type, int counter, FieldId id) {
  auto fn = c.lib.api().nvmlDeviceGetTotalEccErrors;
  if (fn == nullptr) return kNoSymbol;
  unsigned long long n = 0;
  const nvmlReturn_t rc = fn(c.device, type, counter, &n);
  if (rc == NVML_SUCCESS) Num(c, id, static_cast<double>(n));
  return rc;
}

nvmlReturn_t ReadMemory(ProbeContext& c) {
  const Api& api = c.lib.api();
  double total = 0, used = 0;
  if (api.nvmlDeviceGetMemoryInfo_v2 != nullptr) {
    nvmlMemory_v2_t m{};
    m.version = nvmlMemory_v2;
    const nvmlReturn_t rc = api.nvmlDeviceGetMemoryInfo_v2(c.device, &m);
    if (rc == NVML_SUCCESS) {
      total = static_cast<double>(m.total);
      used = static_cast<double>(m.used);
      Num(c, F::kMemoryReservedBytes, static_cast<double>(m.reserved));
      Num(c, F::kMemoryFreeBytes, static_cast<double>(m.free));
    } else if (rc != NVML_ERROR_FUNCTION_NOT_FOUND && rc != NVML_ERROR_NOT_SUPPORTED &&
               rc != NVML_ERROR_ARGUMENT_VERSION_MISMATCH) {
      return rc;
    }
    if (rc == NVML_SUCCESS) {
      Num(c, F::kMemoryTotalBytes, total);
      Num(c, F::kMemoryUsedBytes, used);
      if (total > 0) Num(c, F::kMemoryUsedRatio, used / total);
      return NVML_SUCCESS;
    }
  }
  // v1: no reserved figure, and `used` includes the driver's reservation.
  if (api.nvmlDeviceGetMemoryInfo == nullptr) return kNoSymbol;
  nvmlMemory_t m{};
  const nvmlReturn_t rc = api.nvmlDeviceGetMemoryInfo(c.device, &m);
  if (rc != NVML_SUCCESS) return rc;
  total = static_cast<double>(m.total);
  used = static_cast<double>(m.used);
  Num(c, F::kMemoryTotalBytes, total);
  Num(c, F::kMemoryUsedBytes, used);
  Num(c, F::kMemoryFreeBytes, static_cast<double>(m.free));
  c.out[F::kMemoryReservedBytes] = MissingSymbol("nvmlDeviceGetMemoryInfo_v2");
  if (total > 0) Num(c, F::kMemoryUsedRatio, used / total);
  return NVML_SUCCESS;
}

nvmlReturn_t ReadFieldValues(ProbeContext& c) {
  auto fn = c.lib.api().nvmlDeviceGetFieldValues;
  if (fn == nullptr) return kNoSymbol;
  nvmlFieldValue_t v[3] = {};
  v[0].fieldId = NVML_FI_DEV_MEMORY_TEMP;
  v[1].fieldId = NVML_FI_DEV_POWER_INSTANT;
  v[2].fieldId = NVML_FI_DEV_POWER_AVERAGE;
  const nvmlReturn_t rc = fn(c.device, 3, v);
  if (rc != NVML_SUCCESS) return rc;
  const FieldId ids[3] = {F::kTemperatureMemoryCelsius, F::kPowerDrawInstantWatts,
                          F::kPowerDrawAverageWatts};
  const double scale[3] = {1.0, 1e-3, 1e-3};
  for (int i = 0; i < 3; ++i) {
    if (v[i].nvmlReturn != NVML_SUCCESS) {
      c.out[ids[i]] =
          Reading::Absent(MissingFor(v[i].nvmlReturn),
                          fmt::format("nvmlDeviceGetFieldValues: field {}: {}", v[i].fieldId,
                                      c.lib.ErrorString(v[i].nvmlReturn)));
      continue;
    }
    double x = 0;
    switch (v[i].valueType) {
      case NVML_VALUE_TYPE_DOUBLE:
        x = v[i].value.dVal;
        break;
      case NVML_VALUE_TYPE_UNSIGNED_INT:
        x = v[i].value.uiVal;
        break;
      case NVML_VALUE_TYPE_UNSIGNED_LONG:
        x = static_cast<double>(v[i].value.ulVal);
        break;
      case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
        x = static_cast<double>(v[i].value.ullVal);
        break;
      case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
        x = static_cast<double>(v[i].value.sllVal);
        break;
      case NVML_VALUE_TYPE_SIGNED_INT:
        x = v[i].value.siVal;
        break;
      default:
        x = v[i].value.uiVal;
        break;
    }
    Num(c, ids[i], x * scale[i]);
  }
  return NVML_SUCCESS;
}

nvmlReturn_t ReadPciBusId(ProbeContext& c) {
  const Api& api = c.lib.api();
  auto pci = api.nvmlDeviceGetPciInfo_v3 != nullptr ? api.nvmlDeviceGetPciInfo_v3
                                                    : api.nvmlDeviceGetPciInfo_v2;
  if (pci == nullptr) return kNoSymbol;
  nvmlPciInfo_t p{};
  const nvmlReturn_t rc = pci(c.device, &p);
  if (rc == NVML_SUCCESS) c.out[F::kPciBusId] = Reading::Text(p.busId);
  return rc;
}

nvmlReturn_t ReadComputeCapability(ProbeContext& c) {
  auto fn = c.lib.api().nvmlDeviceGetCudaComputeCapability;
  if (fn == nullptr) return kNoSymbol;
  int major = 0, minor = 0;
  const nvmlReturn_t rc = fn(c.device, &major, &minor);
  if (rc == NVML_SUCCESS)
    c.out[F::kComputeCapability] = Reading::Text(fmt::format("{}.{}", major, minor));
  return rc;
}

nvmlReturn_t ReadMode(ProbeContext& c, nvmlReturn_t (*fn)(nvmlDevice_t, int*), FieldId id) {
  if (fn == nullptr) return kNoSymbol;
  int mode = 0;
  const nvmlReturn_t rc = fn(c.device, &mode);
  if (rc == NVML_SUCCESS) Num(c, id, mode);
  return rc;
}

nvmlReturn_t ReadEventReasons(ProbeContext& c) {
  const Api& api = c.lib.api();
  auto fn = api.nvmlDeviceGetCurrentClocksEventReasons != nullptr
                ? api.nvmlDeviceGetCurrentClocksEventReasons
                : api.nvmlDeviceGetCurrentClocksThrottleReasons;
  return ReadOne<unsigned long long>(c, fn, F::kClockEventReasons, 1.0);
}

nvmlReturn_t ReadPowerConstraints(ProbeContext& c) {
  auto fn = c.lib.api().nvmlDeviceGetPowerManagementLimitConstraints;
  if (fn == nullptr) return kNoSymbol;
  unsigned lo = 0, hi = 0;
  const nvmlReturn_t rc = fn(c.device, &lo, &hi);
  if (rc == NVML_SUCCESS) {
    Num(c, F::kPowerLimitMinWatts, lo / 1000.0);
    Num(c, F::kPowerLimitMaxWatts, hi / 1000.0);
  }
  return rc;
}

nvmlReturn_t ReadRemappedRows(ProbeContext& c) {
  auto fn = c.lib.api().nvmlDeviceGetRemappedRows;
  if (fn == nullptr) return kNoSymbol;
  unsigned corr = 0, unc = 0, pending = 0, failed = 0;
  const nvmlReturn_t rc = fn(c.device, &corr, &unc, &pending, &failed);
  if (rc == NVML_SUCCESS) {
    Num(c, F::kRemappedRowsCorrectable, corr);
    Num(c, F::kRemappedRowsUncorrectable, unc);
    Num(c, F::kRemappedRowsPending, pending != 0 ? 1 : 0);
    Num(c, F::kRemappedRowsFailure, failed != 0 ? 1 : 0);
  }
  return rc;
}

nvmlReturn_t ReadUtilization(ProbeContext& c) {
  auto fn = c.lib.api().nvmlDeviceGetUtilizationRates;
  if (fn == nullptr) return kNoSymbol;
  nvmlUtilization_t u{};
  const nvmlReturn_t rc = fn(c.device, &u);
  if (rc == NVML_SUCCESS) {
    Num(c, F::kUtilizationGpuRatio, u.gpu / 100.0);
    Num(c, F::kUtilizationMemoryRatio, u.memory / 100.0);
  }
  return rc;
}

nvmlReturn_t ReadCodec(ProbeContext& c, bool encoder) {
  auto fn = encoder ? c.lib.api().nvmlDeviceGetEncoderUtilization
                    : c.lib.api().nvmlDeviceGetDecoderUtilization;
  if (fn == nullptr) return kNoSymbol;
  unsigned util = 0, period_us = 0;
  const nvmlReturn_t rc = fn(c.device, &util, &period_us);
  if (rc == NVML_SUCCESS)
    Num(c, encoder ? F::kUtilizationEncoderRatio : F::kUtilizationDecoderRatio, util / 100.0);
  return rc;
}

nvmlReturn_t ReadBar1(ProbeContext& c) {
  auto fn = c.lib.api().nvmlDeviceGetBAR1MemoryInfo;
  if (fn == nullptr) return kNoSymbol;
  nvmlBAR1Memory_t b{};
  const nvmlReturn_t rc = fn(c.device, &b);
  if (rc == NVML_SUCCESS) {
    Num(c, F::kBar1TotalBytes, static_cast<double>(b.bar1Total));
    Num(c, F::kBar1UsedBytes, static_cast<double>(b.bar1Used));
  }
  return rc;
}

nvmlReturn_t ReadPcieThroughput(ProbeContext& c, int counter, FieldId id) {
  auto fn = c.lib.api().nvmlDeviceGetPcieThroughput;
  if (fn == nullptr) return kNoSymbol;
  unsigned kb_per_s = 0;
  const nvmlReturn_t rc = fn(c.device, counter, &kb_per_s);
  if (rc == NVML_SUCCESS) Num(c, id, kb_per_s * 1024.0);
  return rc;
}

template <std::size_t N>
constexpr Probe MakeProbe(std::string_view call, const FieldId (&ids)[N],
                          nvmlReturn_t (*read)(ProbeContext&)) {
  Probe p{call, {}, N, read};
  for (std::size_t i = 0; i < N; ++i) p.fields[i] = ids[i];
  return p;
}

#define API(c) (c).lib.api()
// clang-format off
const Probe kProbes[] = {
  MakeProbe("nvmlDeviceGetName", {F::kName}, [](ProbeContext& c) { return ReadText(c, API(c).nvmlDeviceGetName, F::kName, NVML_DEVICE_NAME_V2_BUFFER_SIZE); }),
  MakeProbe("nvmlDeviceGetUUID", {F::kUuid}, [](ProbeContext& c) { return ReadText(c, API(c).nvmlDeviceGetUUID, F::kUuid, NVML_DEVICE_UUID_V2_BUFFER_SIZE); }),
  MakeProbe("nvmlDeviceGetSerial", {F::kSerial}, [](ProbeContext& c) { return ReadText(c, API(c).nvmlDeviceGetSerial, F::kSerial, NVML_DEVICE_SERIAL_BUFFER_SIZE); }),
  MakeProbe("nvmlDeviceGetVbiosVersion", {F::kVbiosVersion}, [](ProbeContext& c) { return ReadText(c, API(c).nvmlDeviceGetVbiosVersion, F::kVbiosVersion, NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE); }),
  MakeProbe("nvmlDeviceGetPciInfo_v3", {F::kPciBusId}, ReadPciBusId),
  MakeProbe("nvmlDeviceGetCudaComputeCapability", {F::kComputeCapability}, ReadComputeCapability),
  MakeProbe("nvmlDeviceGetMemoryInfo_v2", {F::kMemoryTotalBytes, F::kMemoryUsedBytes, F::kMemoryFreeBytes, F::kMemoryReservedBytes, F::kMemoryUsedRatio}, ReadMemory),
  MakeProbe("nvmlDeviceGetBAR1MemoryInfo", {F::kBar1TotalBytes, F::kBar1UsedBytes}, ReadBar1),
  MakeProbe("nvmlDeviceGetMaxClockInfo(GRAPHICS)", {F::kClockGraphicsMaxHertz}, [](ProbeContext& c) { return ReadClock(c, true, NVML_CLOCK_GRAPHICS, F::kClockGraphicsMaxHertz); }),
  MakeProbe("nvmlDeviceGetMaxClockInfo(SM)", {F::kClockSmMaxHertz}, [](ProbeContext& c) { return ReadClock(c, true, NVML_CLOCK_SM, F::kClockSmMaxHertz); }),
  MakeProbe("nvmlDeviceGetMaxClockInfo(MEM)", {F::kClockMemoryMaxHertz}, [](ProbeContext& c) { return ReadClock(c, true, NVML_CLOCK_MEM, F::kClockMemoryMaxHertz); }),
  MakeProbe("nvmlDeviceGetPowerManagementDefaultLimit", {F::kPowerLimitDefaultWatts}, [](ProbeContext& c) { return ReadOne<unsigned>(c, API(c).nvmlDeviceGetPowerManagementDefaultLimit, F::kPowerLimitDefaultWatts, 1e-3); }),
  MakeProbe("nvmlDeviceGetPowerManagementLimitConstraints", {F::kPowerLimitMinWatts, F::kPowerLimitMaxWatts}, ReadPowerConstraints),
  MakeProbe("nvmlDeviceGetMaxPcieLinkGeneration", {F::kPcieLinkGenMax}, [](ProbeContext& c) { return ReadOne<unsigned>(c, API(c).nvmlDeviceGetMaxPcieLinkGeneration, F::kPcieLinkGenMax, 1); }),
  MakeProbe("nvmlDeviceGetMaxPcieLinkWidth", {F::kPcieLinkWidthMax}, [](ProbeContext& c) { return ReadOne<unsigned>(c, API(c).nvmlDeviceGetMaxPcieLinkWidth, F::kPcieLinkWidthMax, 1); }),
  MakeProbe("nvmlDeviceGetMigMode", {F::kMigMode}, [](ProbeContext& c) {
    auto fn = API(c).nvmlDeviceGetMigMode;
    if (fn == nullptr) return kNoSymbol;
    unsigned current = 0, pending = 0;
    const nvmlReturn_t rc = fn(c.device, &current, &pending);
    if (rc == NVML_SUCCESS) Num(c, F::kMigMode, current);
    return rc; }),
  MakeProbe("nvmlDeviceGetPersistenceMode", {F::kPersistenceMode}, [](ProbeContext& c) { return ReadMode(c, API(c).nvmlDeviceGetPersistenceMode, F::kPersistenceMode); }),
  MakeProbe("nvmlDeviceGetComputeMode", {F::kComputeMode}, [](ProbeContext& c) { return ReadMode(c, API(c).nvmlDeviceGetComputeMode, F::kComputeMode); }),
  MakeProbe("nvmlDeviceGetDisplayMode", {F::kDisplayMode}, [](ProbeContext& c) { return ReadMode(c, API(c).nvmlDeviceGetDisplayMode, F::kDisplayMode); }),
  MakeProbe("nvmlDeviceGetDisplayActive", {F::kDisplayActive}, [](ProbeContext& c) { return ReadMode(c, API(c).nvmlDeviceGetDisplayActive, F::kDisplayActive); }),
  MakeProbe("nvmlDeviceGetEccMode", {F::kEccMode}, [](ProbeContext& c) {
    auto fn = API(c).nvmlDeviceGetEccMode;
    if (fn == nullptr) return kNoSymbol;
    int current = 0, pending = 0;
    const nvmlReturn_t rc = fn(c.device, &current, &pending);
    if (rc == NVML_SUCCESS) Num(c, F::kEccMode, current);
    return rc; }),
  MakeProbe("nvmlDeviceGetSupportedClocksEventReasons", {F::kClockEventReasonsSupported}, [](ProbeContext& c) { return ReadOne<unsigned long long>(c, API(c).nvmlDeviceGetSupportedClocksEventReasons, F::kClockEventReasonsSupported, 1); }),
  MakeProbe("nvmlDeviceGetPowerManagementLimit", {F::kPowerLimitWatts}, [](ProbeContext& c) { return ReadOne<unsigned>(c, API(c).nvmlDeviceGetPowerManagementLimit, F::kPowerLimitWatts, 1e-3); }),
  MakeProbe("nvmlDeviceGetEnforcedPowerLimit", {F::kPowerLimitEnforcedWatts}, [](ProbeContext& c) { return ReadOne<unsigned>(c, API(c).nvmlDeviceGetEnforcedPowerLimit, F::kPowerLimitEnforcedWatts, 1e-3); }),
  MakeProbe("nvmlDeviceGetCurrPcieLinkGeneration", {F::kPcieLinkGenCurrent}, [](ProbeContext& c) { return ReadOne<unsigned>(c, API(c).nvmlDeviceGetCurrPcieLinkGeneration, F::kPcieLinkGenCurrent, 1); }),
  MakeProbe("nvmlDeviceGetCurrPcieLinkWidth", {F::kPcieLinkWidthCurrent}, [](ProbeContext& c) { return ReadOne<unsigned>(c, API(c).nvmlDeviceGetCurrPcieLinkWidth, F::kPcieLinkWidthCurrent, 1); }),
  MakeProbe("nvmlDeviceGetTotalEccErrors(CORRECTED,VOLATILE)", {F::kEccErrorsCorrectedVolatile}, [](ProbeContext& c) { return ReadEcc(c, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, F::kEccErrorsCorrectedVolatile); }),
  MakeProbe("nvmlDeviceGetTotalEccErrors(UNCORRECTED,VOLATILE)", {F::kEccErrorsUncorrectedVolatile}, [](ProbeContext& c) { return ReadEcc(c, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, F::kEccErrorsUncorrectedVolatile); }),
  MakeProbe("nvmlDeviceGetTotalEccErrors(CORRECTED,AGGREGATE)", {F::kEccErrorsCorrectedAggregate}, [](ProbeContext& c) { return ReadEcc(c, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, F::kEccErrorsCorrectedAggregate); }),
  MakeProbe("nvmlDeviceGetTotalEccErrors(UNCORRECTED,AGGREGATE)", {F::kEccErrorsUncorrectedAggregate}, [](ProbeContext& c) { return ReadEcc(c, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, F::kEccErrorsUncorrectedAggregate); }),
  MakeProbe("nvmlDeviceGetRemappedRows", {F::kRemappedRowsCorrectable, F::kRemappedRowsUncorrectable, F::kRemappedRowsPending, F::kRemappedRowsFailure}, ReadRemappedRows),
  MakeProbe("nvmlDeviceGetUtilizationRates", {F::kUtilizationGpuRatio, F::kUtilizationMemoryRatio}, ReadUtilization),
  MakeProbe("nvmlDeviceGetEncoderUtilization", {F::kUtilizationEncoderRatio}, [](ProbeContext& c) { return ReadCodec(c, true); }),
  MakeProbe("nvmlDeviceGetDecoderUtilization", {F::kUtilizationDecoderRatio}, [](ProbeContext& c) { return ReadCodec(c, false); }),
  MakeProbe("nvmlDeviceGetTemperature", {F::kTemperatureGpuCelsius}, [](ProbeContext& c) {
    auto fn = API(c).nvmlDeviceGetTemperature;
    if (fn == nullptr) return kNoSymbol;
    unsigned t = 0;
    const nvmlReturn_t rc = fn(c.device, NVML_TEMPERATURE_GPU, &t);
    if (rc == NVML_SUCCESS) Num(c, F::kTemperatureGpuCelsius, t);
    return rc; }),
  MakeProbe("nvmlDeviceGetFieldValues", {F::kTemperatureMemoryCelsius, F::kPowerDrawInstantWatts, F::kPowerDrawAverageWatts}, ReadFieldValues),
  MakeProbe("nvmlDeviceGetPowerUsage", {F::kPowerDrawWatts}, [](ProbeContext& c) { return ReadOne<unsigned>(c, API(c).nvmlDeviceGetPowerUsage, F::kPowerDrawWatts, 1e-3); }),
  MakeProbe("nvmlDeviceGetTotalEnergyConsumption", {F::kEnergyJoules}, [](ProbeContext& c) { return ReadOne<unsigned long long>(c, API(c).nvmlDeviceGetTotalEnergyConsumption, F::kEnergyJoules, 1e-3); }),
  MakeProbe("nvmlDeviceGetClockInfo(GRAPHICS)", {F::kClockGraphicsHertz}, [](ProbeContext& c) { return ReadClock(c, false, NVML_CLOCK_GRAPHICS, F::kClockGraphicsHertz); }),
  MakeProbe("nvmlDeviceGetClockInfo(SM)", {F::kClockSmHertz}, [](ProbeContext& c) { return ReadClock(c, false, NVML_CLOCK_SM, F::kClockSmHertz); }),
  MakeProbe("nvmlDeviceGetClockInfo(MEM)", {F::kClockMemoryHertz}, [](ProbeContext& c) { return ReadClock(c, false, NVML_CLOCK_MEM, F::kClockMemoryHertz); }),
  MakeProbe("nvmlDeviceGetPerformanceState", {F::kPerformanceState}, [](ProbeContext& c) {
    const nvmlReturn_t rc = ReadMode(c, API(c).nvmlDeviceGetPerformanceState, F::kPerformanceState);
    if (rc == NVML_SUCCESS && c.out[F::kPerformanceState].number() == NVML_PSTATE_UNKNOWN)
      c.out[F::kPerformanceState] = Reading::Absent(Missing::kNotSupported, "nvmlDeviceGetPerformanceState: unknown");
    return rc; }),
  MakeProbe("nvmlDeviceGetCurrentClocksEventReasons", {F::kClockEventReasons}, ReadEventReasons),
  MakeProbe("nvmlDeviceGetFanSpeed", {F::kFanSpeedRatio}, [](ProbeContext& c) { return ReadOne<unsigned>(c, API(c).nvmlDeviceGetFanSpeed, F::kFanSpeedRatio, 0.01); }),
  MakeProbe("nvmlDeviceGetPcieThroughput(TX)", {F::kPcieTxBytesPerSecond}, [](ProbeContext& c) { return ReadPcieThroughput(c, NVML_PCIE_UTIL_TX_BYTES, F::kPcieTxBytesPerSecond); }),
  MakeProbe("nvmlDeviceGetPcieThroughput(RX)", {F::kPcieRxBytesPerSecond}, [](ProbeContext& c) { return ReadPcieThroughput(c, NVML_PCIE_UTIL_RX_BYTES, F::kPcieRxBytesPerSecond); }),
  MakeProbe("nvmlDeviceGetSamples(TOTAL_POWER)", {F::kPowerDrawPeakWatts}, [](ProbeContext& c) { return ReadPowerSamples(c.lib, c.device, c.streams, c.out); }),
  MakeProbe("nvmlDeviceGetSamples(GPU_UTILIZATION)", {F::kUtilizationGpuMeanRatio}, [](ProbeContext& c) { return ReadUtilizationSamples(c.lib, c.device, c.streams, c.out); }),
  MakeProbe("nvmlEventSetWait_v2(XID)", {F::kXidErrorsTotal, F::kXidLast}, [](ProbeContext& c) { return ReadXidEvents(c.lib, c.device, c.streams, c.out); }),
};
// clang-format on
#undef API

}  // namespace

std::span<const Probe> DeviceProbes() { return kProbes; }

}  // namespace gpuwatch::nvml
