// The catalogue rows. One row per metric; order follows FieldId.
#include <algorithm>
#include <array>
#include <cmath>

#include "gpuwatch/fields.h"

namespace gpuwatch {
namespace {

using U = Unit;
using K = Kind;
using S = Scope;
using C = Cadence;
using F = Format;

constexpr std::string_view kOnOff = "Disabled|Enabled";

// clang-format off
constexpr std::array kRows = {
// id, key, unit, kind, scope, cadence, help, smi name, smi alias, prometheus, dcgm alias[, format, words]
FieldInfo{FieldId::kDriverVersion, "driver_version", U::kText, K::kInfo, S::kHost, C::kStatic,
  "Version of the installed NVIDIA display driver.", "driver_version", "", "", "DCGM_FI_DRIVER_VERSION"},
FieldInfo{FieldId::kCudaDriverVersion, "cuda_driver_version", U::kText, K::kInfo, S::kHost, C::kStatic,
  "Highest CUDA version the driver supports.", "", "", "", "DCGM_FI_CUDA_DRIVER_VERSION"},
FieldInfo{FieldId::kNvmlVersion, "nvml_version", U::kText, K::kInfo, S::kHost, C::kStatic,
  "Version of the NVML library.", "", "", "", "DCGM_FI_NVML_VERSION"},
FieldInfo{FieldId::kDeviceCount, "device_count", U::kCount, K::kGauge, S::kHost, C::kStatic,
  "Number of GPUs NVML reports.", "count", "", "gpuwatch_devices", "DCGM_FI_DEV_COUNT"},

FieldInfo{FieldId::kIndex, "index", U::kNone, K::kInfo, S::kDevice, C::kStatic,
  "NVML index of the GPU (PCI bus order).", "index", "", "", "DCGM_FI_DEV_NVML_INDEX"},
FieldInfo{FieldId::kName, "name", U::kText, K::kInfo, S::kDevice, C::kStatic,
  "Product name of the GPU.", "name", "gpu_name", "", "DCGM_FI_DEV_NAME"},
FieldInfo{FieldId::kUuid, "uuid", U::kText, K::kInfo, S::kDevice, C::kStatic,
  "Globally unique, immutable identifier of the GPU.", "uuid", "gpu_uuid", "", "DCGM_FI_DEV_UUID"},
FieldInfo{FieldId::kSerial, "serial", U::kText, K::kInfo, S::kDevice, C::kStatic,
  "Board serial number.", "serial", "gpu_serial", "", "DCGM_FI_DEV_SERIAL"},
FieldInfo{FieldId::kPciBusId, "pci_bus_id", U::kText, K::kInfo, S::kDevice, C::kStatic,
  "PCI bus id as domain:bus:device.function.", "pci.bus_id", "gpu_bus_id", "", "DCGM_FI_DEV_PCI_BUSID"},
FieldInfo{FieldId::kVbiosVersion, "vbios_version", U::kText, K::kInfo, S::kDevice, C::kStatic,
  "Version of the GPU's video BIOS.", "vbios_version", "", "", "DCGM_FI_DEV_VBIOS_VERSION"},
FieldInfo{FieldId::kComputeCapability, "compute_capability", U::kText, K::kInfo, S::kDevice, C::kStatic,
  "CUDA compute capability (major.minor).", "compute_cap", "", "", "DCGM_FI_DEV_CUDA_COMPUTE_CAPABILITY"},
FieldInfo{FieldId::kMemoryTotalBytes, "memory_total_bytes", U::kBytes, K::kGauge, S::kDevice, C::kStatic,
  "Total installed GPU memory.", "memory.total", "", "gpuwatch_memory_total_bytes", "DCGM_FI_DEV_FB_TOTAL"},
FieldInfo{FieldId::kBar1TotalBytes, "bar1_total_bytes", U::kBytes, K::kGauge, S::kDevice, C::kStatic,
  "Total BAR1 memory (host-mappable window).", "", "", "gpuwatch_bar1_total_bytes", "DCGM_FI_DEV_BAR1_TOTAL"},
FieldInfo{FieldId::kClockGraphicsMaxHertz, "clock_graphics_max_hertz", U::kHertz, K::kGauge, S::kDevice, C::kStatic,
  "Maximum graphics clock.", "clocks.max.graphics", "clocks.max.gr", "gpuwatch_clock_graphics_max_hertz", ""},
FieldInfo{FieldId::kClockSmMaxHertz, "clock_sm_max_hertz", U::kHertz, K::kGauge, S::kDevice, C::kStatic,
  "Maximum SM clock.", "clocks.max.sm", "", "gpuwatch_clock_sm_max_hertz", "DCGM_FI_DEV_MAX_SM_CLOCK"},
FieldInfo{FieldId::kClockMemoryMaxHertz, "clock_memory_max_hertz", U::kHertz, K::kGauge, S::kDevice, C::kStatic,
  "Maximum memory clock.", "clocks.max.memory", "clocks.max.mem", "gpuwatch_clock_memory_max_hertz", "DCGM_FI_DEV_MAX_MEM_CLOCK"},
FieldInfo{FieldId::kPowerLimitDefaultWatts, "power_limit_default_watts", U::kWatts, K::kGauge, S::kDevice, C::kStatic,
  "Default power limit (the limit the board boots with).", "power.default_limit", "gpu.power.default_limit", "gpuwatch_power_limit_default_watts", ""},
FieldInfo{FieldId::kPowerLimitMinWatts, "power_limit_min_watts", U::kWatts, K::kGauge, S::kDevice, C::kStatic,
  "Lowest power limit that can be set.", "power.min_limit", "gpu.power.min_limit", "gpuwatch_power_limit_min_watts", ""},
FieldInfo{FieldId::kPowerLimitMaxWatts, "power_limit_max_watts", U::kWatts, K::kGauge, S::kDevice, C::kStatic,
  "Highest power limit that can be set.", "power.max_limit", "gpu.power.max_limit", "gpuwatch_power_limit_max_watts", ""},
FieldInfo{FieldId::kPcieLinkGenMax, "pcie_link_gen_max", U::kNone, K::kGauge, S::kDevice, C::kStatic,
  "Highest PCIe generation of the GPU and system.", "pcie.link.gen.max", "", "gpuwatch_pcie_link_gen_max", ""},
FieldInfo{FieldId::kPcieLinkWidthMax, "pcie_link_width_max", U::kNone, K::kGauge, S::kDevice, C::kStatic,
  "Widest PCIe link (lanes).", "pcie.link.width.max", "", "gpuwatch_pcie_link_width_max", ""},
FieldInfo{FieldId::kMigMode, "mig_mode", U::kNone, K::kGauge, S::kDevice, C::kStatic,
  "MIG mode in effect (0 disabled, 1 enabled).", "mig.mode.current", "", "gpuwatch_mig_mode", "DCGM_FI_DEV_MIG_MODE", F::kWords, kOnOff},
FieldInfo{FieldId::kPersistenceMode, "persistence_mode", U::kNone, K::kGauge, S::kDevice, C::kStatic,
  "Persistence mode (0 disabled, 1 enabled).", "persistence_mode", "", "gpuwatch_persistence_mode", "DCGM_FI_DEV_PERSISTENCE_MODE", F::kWords, kOnOff},
FieldInfo{FieldId::kComputeMode, "compute_mode", U::kNone, K::kGauge, S::kDevice, C::kStatic,
  "Compute mode (0 Default, 1 Exclusive_Thread, 2 Prohibited, 3 Exclusive_Process).", "compute_mode", "", "gpuwatch_compute_mode", "DCGM_FI_DEV_COMPUTE_MODE",
  F::kWords, "Default|Exclusive_Thread|Prohibited|Exclusive_Process"},
FieldInfo{FieldId::kDisplayMode, "display_mode", U::kNone, K::kInfo, S::kDevice, C::kStatic,
  "Whether a display can be initialized (0 disabled, 1 enabled).", "display_mode", "", "", "", F::kWords, kOnOff},
FieldInfo{FieldId::kDisplayActive, "display_active", U::kNone, K::kInfo, S::kDevice, C::kStatic,
  "Whether a display is initialized on the GPU (0 disabled, 1 enabled).", "display_active", "", "", "", F::kWords, kOnOff},
FieldInfo{FieldId::kEccMode, "ecc_mode", U::kNone, K::kGauge, S::kDevice, C::kStatic,
  "ECC mode in effect (0 disabled, 1 enabled).", "ecc.mode.current", "", "gpuwatch_ecc_mode", "DCGM_FI_DEV_ECC_CURRENT", F::kWords, kOnOff},
FieldInfo{FieldId::kClockEventReasonsSupported, "clock_event_reasons_supported", U::kNone, K::kInfo, S::kDevice, C::kStatic,
  "Bit mask of clock event (throttle) reasons the GPU can report.", "clocks_event_reasons.supported", "clocks_throttle_reasons.supported", "", "", F::kHex64},

FieldInfo{FieldId::kPowerLimitWatts, "power_limit_watts", U::kWatts, K::kGauge, S::kDevice, C::kSlow,
  "Power management limit requested for the GPU.", "power.limit", "gpu.power.requested_limit", "gpuwatch_power_limit_watts", "DCGM_FI_DEV_POWER_MGMT_LIMIT"},
FieldInfo{FieldId::kPowerLimitEnforcedWatts, "power_limit_enforced_watts", U::kWatts, K::kGauge, S::kDevice, C::kSlow,
  "Power limit the GPU enforces now (lowest of all limiters).", "enforced.power.limit", "gpu.power.current_limit", "gpuwatch_power_limit_enforced_watts", "DCGM_FI_DEV_ENFORCED_POWER_LIMIT"},
FieldInfo{FieldId::kPcieLinkGenCurrent, "pcie_link_gen_current", U::kNone, K::kGauge, S::kDevice, C::kSlow,
  "Current PCIe generation (may drop when idle).", "pcie.link.gen.current", "", "gpuwatch_pcie_link_gen_current", "DCGM_FI_DEV_PCIE_LINK_GEN"},
FieldInfo{FieldId::kPcieLinkWidthCurrent, "pcie_link_width_current", U::kNone, K::kGauge, S::kDevice, C::kSlow,
  "Current PCIe link width (lanes).", "pcie.link.width.current", "", "gpuwatch_pcie_link_width_current", "DCGM_FI_DEV_PCIE_LINK_WIDTH"},
FieldInfo{FieldId::kEccErrorsCorrectedVolatile, "ecc_errors_corrected_volatile", U::kCount, K::kCounter, S::kDevice, C::kSlow,
  "Corrected ECC errors since the driver loaded.", "ecc.errors.corrected.volatile.total", "", "gpuwatch_ecc_errors_corrected_volatile_total", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"},
FieldInfo{FieldId::kEccErrorsUncorrectedVolatile, "ecc_errors_uncorrected_volatile", U::kCount, K::kCounter, S::kDevice, C::kSlow,
  "Uncorrected ECC errors since the driver loaded.", "ecc.errors.uncorrected.volatile.total", "", "gpuwatch_ecc_errors_uncorrected_volatile_total", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"},
FieldInfo{FieldId::kEccErrorsCorrectedAggregate, "ecc_errors_corrected_aggregate", U::kCount, K::kCounter, S::kDevice, C::kSlow,
  "Corrected ECC errors over the GPU's lifetime.", "ecc.errors.corrected.aggregate.total", "", "gpuwatch_ecc_errors_corrected_aggregate_total", "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL"},
FieldInfo{FieldId::kEccErrorsUncorrectedAggregate, "ecc_errors_uncorrected_aggregate", U::kCount, K::kCounter, S::kDevice, C::kSlow,
  "Uncorrected ECC errors over the GPU's lifetime.", "ecc.errors.uncorrected.aggregate.total", "", "gpuwatch_ecc_errors_uncorrected_aggregate_total", "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL"},
FieldInfo{FieldId::kRemappedRowsCorrectable, "remapped_rows_correctable", U::kCount, K::kGauge, S::kDevice, C::kSlow,
  "Rows remapped because of correctable errors.", "remapped_rows.correctable", "remapped_rows.sbe", "gpuwatch_remapped_rows_correctable", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"},
FieldInfo{FieldId::kRemappedRowsUncorrectable, "remapped_rows_uncorrectable", U::kCount, K::kGauge, S::kDevice, C::kSlow,
  "Rows remapped because of uncorrectable errors.", "remapped_rows.uncorrectable", "remapped_rows.dbe", "gpuwatch_remapped_rows_uncorrectable", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"},
FieldInfo{FieldId::kRemappedRowsPending, "remapped_rows_pending", U::kNone, K::kGauge, S::kDevice, C::kSlow,
  "A row remap is pending: reset the GPU (0 no, 1 yes).", "remapped_rows.pending", "", "gpuwatch_remapped_rows_pending", "DCGM_FI_DEV_ROW_REMAP_PENDING", F::kWords, "No|Yes"},
FieldInfo{FieldId::kRemappedRowsFailure, "remapped_rows_failure", U::kNone, K::kGauge, S::kDevice, C::kSlow,
  "A row remap failed (0 no, 1 yes).", "remapped_rows.failure", "", "gpuwatch_remapped_rows_failure", "DCGM_FI_DEV_ROW_REMAP_FAILURE", F::kWords, "No|Yes"},

FieldInfo{FieldId::kMemoryUsedBytes, "memory_used_bytes", U::kBytes, K::kGauge, S::kDevice, C::kInterval,
  "GPU memory allocated by all processes and the driver's contexts.", "memory.used", "", "gpuwatch_memory_used_bytes", "DCGM_FI_DEV_FB_USED"},
FieldInfo{FieldId::kMemoryFreeBytes, "memory_free_bytes", U::kBytes, K::kGauge, S::kDevice, C::kInterval,
  "GPU memory free for allocation.", "memory.free", "", "gpuwatch_memory_free_bytes", "DCGM_FI_DEV_FB_FREE"},
FieldInfo{FieldId::kMemoryReservedBytes, "memory_reserved_bytes", U::kBytes, K::kGauge, S::kDevice, C::kInterval,
  "GPU memory the driver reserves for itself (firmware, ECC); never available to processes.", "memory.reserved", "", "gpuwatch_memory_reserved_bytes", "DCGM_FI_DEV_FB_RESERVED"},
FieldInfo{FieldId::kMemoryUsedRatio, "memory_used_ratio", U::kRatio, K::kGauge, S::kDevice, C::kInterval,
  "memory_used_bytes / memory_total_bytes.", "", "", "gpuwatch_memory_used_ratio", ""},
FieldInfo{FieldId::kBar1UsedBytes, "bar1_used_bytes", U::kBytes, K::kGauge, S::kDevice, C::kInterval,
  "BAR1 memory in use.", "", "", "gpuwatch_bar1_used_bytes", "DCGM_FI_DEV_BAR1_USED"},
FieldInfo{FieldId::kUtilizationGpuRatio, "utilization_gpu_ratio", U::kRatio, K::kGauge, S::kDevice, C::kInterval,
  "Fraction of the last sample period in which a kernel ran on the GPU.", "utilization.gpu", "", "gpuwatch_utilization_ratio", "DCGM_FI_DEV_GPU_UTIL"},
FieldInfo{FieldId::kUtilizationMemoryRatio, "utilization_memory_ratio", U::kRatio, K::kGauge, S::kDevice, C::kInterval,
  "Fraction of the last sample period in which device memory was read or written.", "utilization.memory", "", "gpuwatch_memory_utilization_ratio", "DCGM_FI_DEV_MEM_COPY_UTIL"},
FieldInfo{FieldId::kUtilizationEncoderRatio, "utilization_encoder_ratio", U::kRatio, K::kGauge, S::kDevice, C::kInterval,
  "Video encoder utilization.", "utilization.encoder", "", "gpuwatch_encoder_utilization_ratio", "DCGM_FI_DEV_ENC_UTIL"},
FieldInfo{FieldId::kUtilizationDecoderRatio, "utilization_decoder_ratio", U::kRatio, K::kGauge, S::kDevice, C::kInterval,
  "Video decoder utilization.", "utilization.decoder", "", "gpuwatch_decoder_utilization_ratio", "DCGM_FI_DEV_DEC_UTIL"},
FieldInfo{FieldId::kTemperatureGpuCelsius, "temperature_gpu_celsius", U::kCelsius, K::kGauge, S::kDevice, C::kInterval,
  "GPU core temperature.", "temperature.gpu", "", "gpuwatch_temperature_celsius", "DCGM_FI_DEV_GPU_TEMP"},
FieldInfo{FieldId::kTemperatureMemoryCelsius, "temperature_memory_celsius", U::kCelsius, K::kGauge, S::kDevice, C::kInterval,
  "HBM memory temperature.", "temperature.memory", "", "gpuwatch_memory_temperature_celsius", "DCGM_FI_DEV_MEMORY_TEMP"},
FieldInfo{FieldId::kPowerDrawWatts, "power_draw_watts", U::kWatts, K::kGauge, S::kDevice, C::kInterval,
  "Power draw as the driver reports it (1 s average on Ampere and newer).", "power.draw", "", "gpuwatch_power_watts", "DCGM_FI_DEV_POWER_USAGE"},
FieldInfo{FieldId::kPowerDrawInstantWatts, "power_draw_instant_watts", U::kWatts, K::kGauge, S::kDevice, C::kInterval,
  "Instantaneous power draw.", "power.draw.instant", "gpu.power.draw.instant", "gpuwatch_power_instant_watts", "DCGM_FI_DEV_POWER_USAGE_INSTANT"},
FieldInfo{FieldId::kPowerDrawAverageWatts, "power_draw_average_watts", U::kWatts, K::kGauge, S::kDevice, C::kInterval,
  "Power draw averaged over one second.", "power.draw.average", "gpu.power.draw.average", "gpuwatch_power_average_watts", ""},
FieldInfo{FieldId::kEnergyJoules, "energy_joules", U::kJoules, K::kCounter, S::kDevice, C::kCostly,
  "Energy consumed since the driver loaded.", "", "", "gpuwatch_energy_joules_total", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"},
FieldInfo{FieldId::kClockGraphicsHertz, "clock_graphics_hertz", U::kHertz, K::kGauge, S::kDevice, C::kInterval,
  "Current graphics clock.", "clocks.current.graphics", "clocks.gr", "gpuwatch_clock_graphics_hertz", ""},
FieldInfo{FieldId::kClockSmHertz, "clock_sm_hertz", U::kHertz, K::kGauge, S::kDevice, C::kInterval,
  "Current SM clock.", "clocks.current.sm", "clocks.sm", "gpuwatch_clock_sm_hertz", "DCGM_FI_DEV_SM_CLOCK"},
FieldInfo{FieldId::kClockMemoryHertz, "clock_memory_hertz", U::kHertz, K::kGauge, S::kDevice, C::kInterval,
  "Current memory clock.", "clocks.current.memory", "clocks.mem", "gpuwatch_clock_memory_hertz", "DCGM_FI_DEV_MEM_CLOCK"},
FieldInfo{FieldId::kPerformanceState, "performance_state", U::kNone, K::kGauge, S::kDevice, C::kInterval,
  "Performance state, 0 (P0, fastest) to 15 (P15, slowest).", "pstate", "", "gpuwatch_performance_state", "DCGM_FI_DEV_PSTATE", F::kPstate},
FieldInfo{FieldId::kClockEventReasons, "clock_event_reasons", U::kNone, K::kGauge, S::kDevice, C::kInterval,
  "Bit mask of why clocks are held down now (idle, power cap, thermal, ...).", "clocks_event_reasons.active", "clocks_throttle_reasons.active", "gpuwatch_clock_event_reasons", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", F::kHex64},
FieldInfo{FieldId::kFanSpeedRatio, "fan_speed_ratio", U::kRatio, K::kGauge, S::kDevice, C::kInterval,
  "Intended fan speed; not reported on passively cooled boards.", "fan.speed", "", "gpuwatch_fan_speed_ratio", "DCGM_FI_DEV_FAN_SPEED"},
FieldInfo{FieldId::kPcieTxBytesPerSecond, "pcie_tx_bytes_per_second", U::kBytesPerSecond, K::kGauge, S::kDevice, C::kCostly,
  "PCIe transmit throughput.", "", "", "gpuwatch_pcie_tx_bytes_per_second", "DCGM_FI_DEV_PCIE_TX_THROUGHPUT"},
FieldInfo{FieldId::kPcieRxBytesPerSecond, "pcie_rx_bytes_per_second", U::kBytesPerSecond, K::kGauge, S::kDevice, C::kCostly,
  "PCIe receive throughput.", "", "", "gpuwatch_pcie_rx_bytes_per_second", "DCGM_FI_DEV_PCIE_RX_THROUGHPUT"},
FieldInfo{FieldId::kPowerDrawPeakWatts, "power_draw_peak_watts", U::kWatts, K::kGauge, S::kDevice, C::kBuffers,
  "Highest power sample in the driver's buffer since the previous read, at most every second (20 ms samples on an H200): the spikes a 1 s reading averages away.", "", "", "gpuwatch_power_peak_watts", ""},
FieldInfo{FieldId::kUtilizationGpuMeanRatio, "utilization_gpu_mean_ratio", U::kRatio, K::kGauge, S::kDevice, C::kBuffers,
  "Mean of the driver's GPU utilization samples since the previous read, at most every second: covers the whole interval, however long.", "", "", "gpuwatch_utilization_mean_ratio", ""},
FieldInfo{FieldId::kXidErrorsTotal, "xid_errors_total", U::kCount, K::kCounter, S::kDevice, C::kEvents,
  "XID critical-error events the driver reported since gpuwatch started watching the GPU.", "", "", "gpuwatch_xid_errors_total", ""},
FieldInfo{FieldId::kXidLast, "xid_last", U::kNone, K::kGauge, S::kDevice, C::kEvents,
  "Code of the most recent XID event (0: none since gpuwatch started watching).", "", "", "gpuwatch_xid_last", "DCGM_FI_DEV_XID_ERRORS"},

FieldInfo{FieldId::kProcessUsedMemoryBytes, "used_memory_bytes", U::kBytes, K::kGauge, S::kProcess, C::kInterval,
  "GPU memory the process holds (its CUDA context included).", "used_memory", "used_gpu_memory", "gpuwatch_process_memory_used_bytes", ""},
FieldInfo{FieldId::kProcessSmUtilizationRatio, "sm_utilization_ratio", U::kRatio, K::kGauge, S::kProcess, C::kInterval,
  "Share of SM time the process used in the last sample period.", "", "", "gpuwatch_process_sm_utilization_ratio", ""},
FieldInfo{FieldId::kProcessMemoryUtilizationRatio, "memory_utilization_ratio", U::kRatio, K::kGauge, S::kProcess, C::kInterval,
  "Share of memory-controller time the process used.", "", "", "gpuwatch_process_memory_utilization_ratio", ""},
FieldInfo{FieldId::kProcessEncoderUtilizationRatio, "encoder_utilization_ratio", U::kRatio, K::kGauge, S::kProcess, C::kInterval,
  "Share of encoder time the process used.", "", "", "gpuwatch_process_encoder_utilization_ratio", ""},
FieldInfo{FieldId::kProcessDecoderUtilizationRatio, "decoder_utilization_ratio", U::kRatio, K::kGauge, S::kProcess, C::kInterval,
  "Share of decoder time the process used.", "", "", "gpuwatch_process_decoder_utilization_ratio", ""},
FieldInfo{FieldId::kProcessRssBytes, "rss_bytes", U::kBytes, K::kGauge, S::kProcess, C::kInterval,
  "Resident host memory of the process.", "", "", "gpuwatch_process_rss_bytes", ""},
FieldInfo{FieldId::kProcessCpuRatio, "cpu_ratio", U::kRatio, K::kGauge, S::kProcess, C::kInterval,
  "Host CPU use of the process (1.0 = one core busy).", "", "", "gpuwatch_process_cpu_ratio", ""},
};
// clang-format on

static_assert(kRows.size() == kFieldCount, "one catalogue row per FieldId");

constexpr bool RowsInOrder() {
  for (std::size_t i = 0; i < kRows.size(); ++i) {
    if (static_cast<std::size_t>(kRows[i].id) != i) return false;
    const FieldRange r = RangeOf(kRows[i].scope);
    if (i < r.first || i >= r.first + r.count) return false;
  }
  return true;
}
static_assert(RowsInOrder(), "catalogue rows must follow FieldId order and scope ranges");

}  // namespace

std::span<const FieldInfo> Catalogue() { return kRows; }

const FieldInfo& Info(FieldId id) { return kRows[static_cast<std::size_t>(id)]; }

std::optional<FieldId> FindByKey(std::string_view key) {
  for (const auto& row : kRows) {
    if (row.key == key) return row.id;
  }
  return std::nullopt;
}

std::optional<FieldId> FindBySmiName(std::string_view smi_name) {
  if (smi_name.empty()) return std::nullopt;
  for (const auto& row : kRows) {
    if (row.scope == Scope::kProcess) continue;  // compute-app names are their own language
    if (row.smi_name == smi_name || row.smi_alias == smi_name) return row.id;
  }
  return std::nullopt;
}

std::string_view WordFor(const FieldInfo& info, double value) {
  if (info.format != Format::kWords || value < 0 || std::floor(value) != value) return {};
  auto n = static_cast<std::size_t>(value);
  std::string_view rest = info.words;
  for (std::size_t i = 0;; ++i) {
    const auto bar = rest.find('|');
    if (i == n) return rest.substr(0, bar);
    if (bar == std::string_view::npos) return {};
    rest.remove_prefix(bar + 1);
  }
}

FieldMask AllFields() { return FieldMask().set(); }

FieldMask FieldsWithCadence(std::initializer_list<Cadence> cadences) {
  FieldMask m;
  for (const auto& row : kRows) {
    if (std::find(cadences.begin(), cadences.end(), row.cadence) != cadences.end()) Set(m, row.id);
  }
  return m;
}

std::chrono::milliseconds DefaultPeriod(Cadence c, std::chrono::milliseconds interval) {
  using std::chrono::milliseconds;
  switch (c) {
    case Cadence::kStatic:
      return milliseconds::max();
    case Cadence::kSlow:
      return std::max(interval, milliseconds(10'000));
    case Cadence::kInterval:
    case Cadence::kEvents:
      return interval;
    case Cadence::kBuffers:
      return std::max(interval, milliseconds(1'000));
    case Cadence::kCostly:
      return std::max(interval, milliseconds(5'000));
  }
  return interval;
}

}  // namespace gpuwatch
