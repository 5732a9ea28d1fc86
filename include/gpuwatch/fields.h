// The field catalogue: the one place a metric is defined. CSV columns, JSON
// keys, nvidia-smi query names, Prometheus names, dcgm-exporter aliases and
// rule identifiers all come from its rows (src/core/catalogue.cc).
#pragma once

#include <bitset>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

namespace gpuwatch {

// Ordered by scope: host fields, then device fields, then process fields.
// The catalogue checks at compile time that its rows follow this order.
enum class FieldId : std::uint16_t {
  // host (driver-wide)
  kDriverVersion,
  kCudaDriverVersion,
  kNvmlVersion,
  kDeviceCount,
  // device: identity and static facts
  kIndex,
  kName,
  kUuid,
  kSerial,
  kPciBusId,
  kVbiosVersion,
  kComputeCapability,
  kMemoryTotalBytes,
  kBar1TotalBytes,
  kClockGraphicsMaxHertz,
  kClockSmMaxHertz,
  kClockMemoryMaxHertz,
  kPowerLimitDefaultWatts,
  kPowerLimitMinWatts,
  kPowerLimitMaxWatts,
  kPcieLinkGenMax,
  kPcieLinkWidthMax,
  kMigMode,
  kPersistenceMode,
  kComputeMode,
  kDisplayMode,
  kDisplayActive,
  kEccMode,
  kClockEventReasonsSupported,
  // device: slow-changing
  kPowerLimitWatts,
  kPowerLimitEnforcedWatts,
  kPcieLinkGenCurrent,
  kPcieLinkWidthCurrent,
  kEccErrorsCorrectedVolatile,
  kEccErrorsUncorrectedVolatile,
  kEccErrorsCorrectedAggregate,
  kEccErrorsUncorrectedAggregate,
  kRemappedRowsCorrectable,
  kRemappedRowsUncorrectable,
  kRemappedRowsPending,
  kRemappedRowsFailure,
  // device: every interval
  kMemoryUsedBytes,
  kMemoryFreeBytes,
  kMemoryReservedBytes,
  kMemoryUsedRatio,
  kBar1UsedBytes,
  kUtilizationGpuRatio,
  kUtilizationMemoryRatio,
  kUtilizationEncoderRatio,
  kUtilizationDecoderRatio,
  kTemperatureGpuCelsius,
  kTemperatureMemoryCelsius,
  kPowerDrawWatts,
  kPowerDrawInstantWatts,
  kPowerDrawAverageWatts,
  kEnergyJoules,
  kClockGraphicsHertz,
  kClockSmHertz,
  kClockMemoryHertz,
  kPerformanceState,
  kClockEventReasons,
  kFanSpeedRatio,
  kPcieTxBytesPerSecond,
  kPcieRxBytesPerSecond,
  kPowerDrawPeakWatts,
  kUtilizationGpuMeanRatio,
  kXidErrorsTotal,
  kXidLast,
  // process
  kProcessUsedMemoryBytes,
  kProcessSmUtilizationRatio,
  kProcessMemoryUtilizationRatio,
  kProcessEncoderUtilizationRatio,
  kProcessDecoderUtilizationRatio,
  kProcessRssBytes,
  kProcessCpuRatio,
  kCount_,
};

inline constexpr std::size_t kFieldCount = static_cast<std::size_t>(FieldId::kCount_);

enum class Unit : std::uint8_t {
  kNone,  // a plain number (index, link generation)
  kText,
  kBytes,
  kBytesPerSecond,
  kRatio,  // 0..1 (utilization, fan); nvidia-smi shows it as %
  kCelsius,
  kWatts,
  kJoules,
  kHertz,
  kCount,
};

enum class Kind : std::uint8_t { kGauge, kCounter, kInfo };
enum class Scope : std::uint8_t { kHost, kDevice, kProcess };

// How often a field is worth reading (the sampler's default cadence table).
enum class Cadence : std::uint8_t {
  kStatic,    // once, at start (and after a device comes back)
  kSlow,      // every 10 s: limits, link state, error counters
  kInterval,  // every sample
  kCostly,    // at most every 5 s: energy (~4 ms on an H200), PCIe throughput (~20 ms)
  kEvents,    // every sample, from events only a running sampler sees (XID); one-shot reads skip it
  kBuffers,   // every second at most: the driver's sample buffers (~1.2 ms a call on an H200)
};

// How a value is written where words or a base matter (nvidia-smi, status).
enum class Format : std::uint8_t {
  kPlain,
  kWords,   // the value indexes FieldInfo::words ("Disabled|Enabled")
  kHex64,   // 0x%016X bit mask
  kPstate,  // P0..P15
};

struct FieldInfo {
  FieldId id;
  std::string_view key;  // stable: JSON keys, CSV columns, rule names
  Unit unit;
  Kind kind;
  Scope scope;
  Cadence cadence;
  std::string_view help;
  std::string_view smi_name;   // nvidia-smi --query-gpu name, "" if none
  std::string_view smi_alias;  // its other accepted spelling, "" if none
  std::string_view prom_name;  // Prometheus name in base units, "" for info
  std::string_view dcgm_alias;
  Format format = Format::kPlain;
  std::string_view words = {};  // '|'-separated, for Format::kWords
};

std::span<const FieldInfo> Catalogue();
const FieldInfo& Info(FieldId id);
std::optional<FieldId> FindByKey(std::string_view key);
std::optional<FieldId> FindBySmiName(std::string_view smi_name);  // also aliases
// The word for `value` of a kWords field, or "" when out of range.
std::string_view WordFor(const FieldInfo& info, double value);
std::chrono::milliseconds DefaultPeriod(Cadence c, std::chrono::milliseconds interval);

using FieldMask = std::bitset<kFieldCount>;
FieldMask AllFields();
// The fields whose cadence is one of `cadences` (a one-shot command reads
// static + interval fields and skips the costly energy counter).
FieldMask FieldsWithCadence(std::initializer_list<Cadence> cadences);
inline bool Has(const FieldMask& m, FieldId id) { return m.test(static_cast<std::size_t>(id)); }
inline void Set(FieldMask& m, FieldId id) { m.set(static_cast<std::size_t>(id)); }

// The contiguous FieldId range of one scope.
struct FieldRange {
  std::size_t first;
  std::size_t count;
};
constexpr FieldRange RangeOf(Scope s) {
  switch (s) {
    case Scope::kHost:
      return {0, static_cast<std::size_t>(FieldId::kIndex)};
    case Scope::kDevice:
      return {static_cast<std::size_t>(FieldId::kIndex),
              static_cast<std::size_t>(FieldId::kProcessUsedMemoryBytes) -
                  static_cast<std::size_t>(FieldId::kIndex)};
    case Scope::kProcess:
      return {static_cast<std::size_t>(FieldId::kProcessUsedMemoryBytes),
              kFieldCount - static_cast<std::size_t>(FieldId::kProcessUsedMemoryBytes)};
  }
  return {0, 0};
}

}  // namespace gpuwatch
