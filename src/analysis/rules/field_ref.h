// What a rule condition can name: a numeric catalogue field of device or
// process scope, or one of the few derived fields the engine computes from
// a snapshot (docs/rules.md lists them). Values are in the field's base unit;
// a missing value is std::nullopt and never makes a condition true.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuwatch/fields.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::rules {

enum class RuleScope : std::uint8_t { kDevice, kProcess };
std::string_view RuleScopeName(RuleScope s);  // "device", "process"

enum class Derived : std::uint8_t {
  kProcessCount,            // GPU processes on the device
  kEccUncorrectedIncrease,  // new uncorrected ECC errors since the previous reading
  kXidErrors,               // increase of xid_errors_total since the previous snapshot
  kDeviceLost,              // 1 when the device fell off the bus, else 0
  kThrottleThermal,         // 1 when clocks are held down for heat (bits 0x20|0x40|0x8)
  kThrottlePower,           // 1 when clocks are held down for power (bits 0x4|0x80)
  kCount_,
};

struct DerivedInfo {
  Derived id;
  std::string_view key;
  Unit unit;
  std::string_view help;
};
std::span<const DerivedInfo> DerivedFields();

// A catalogue field or a derived one.
struct FieldRef {
  bool derived = false;
  FieldId field = FieldId::kIndex;
  Derived derived_id = Derived::kProcessCount;

  std::string_view key() const;
  Unit unit() const;
  bool is_process_field() const;
  friend bool operator==(const FieldRef&, const FieldRef&) = default;
};

// The field `key` names for a rule of `scope`: device rules see device and
// derived fields; process rules also see process fields. Text fields are
// not comparable and not found.
std::optional<FieldRef> FindRuleField(std::string_view key, RuleScope scope);
// The names FindRuleField accepts, sorted, for error messages.
std::vector<std::string_view> ValidFieldNames(RuleScope scope);
std::string ValidFieldList(RuleScope scope);  // comma-separated

// Derived values of one device in one snapshot (the engine fills the ones
// that need history: the ECC increase).
struct DerivedValues {
  std::optional<double> ecc_uncorrected_increase;
  std::optional<double> xid_errors;
};

// What a condition reads from: a device, optionally one of its processes.
struct EvalContext {
  const DeviceSample* device = nullptr;
  const ProcessSample* process = nullptr;  // set for process rules
  const DerivedValues* derived = nullptr;
};

std::optional<double> ValueOf(const FieldRef& ref, const EvalContext& ctx);
// The catalogue fields ValueOf(ref) is computed from: the field itself, or a
// derived field's sources (none for process_count and device_lost, which come
// from the process list and the device's health).
FieldMask SourceFields(const FieldRef& ref);

// Clock event reason bits (NVML nvmlClocksEventReason*).
inline constexpr std::uint64_t kThermalThrottleBits = 0x20 | 0x40 | 0x8;
inline constexpr std::uint64_t kPowerThrottleBits = 0x4 | 0x80;

}  // namespace gpuwatch::rules
