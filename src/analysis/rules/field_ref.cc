#include "analysis/rules/field_ref.h"

#include <algorithm>
#include <array>

namespace gpuwatch::rules {
namespace {

constexpr std::array kDerived = {
    DerivedInfo{Derived::kProcessCount, "process_count", Unit::kCount,
                "Number of processes using the GPU (N/A while the device is not healthy)."},
    DerivedInfo{Derived::kEccUncorrectedIncrease, "ecc_errors_uncorrected_increase", Unit::kCount,
                "New uncorrected ECC errors (ecc_errors_uncorrected_volatile) since its previous "
                "reading; N/A until two readings exist."},
    DerivedInfo{Derived::kXidErrors, "xid_errors", Unit::kCount,
                "New XID events (xid_errors_total) since the previous snapshot; N/A until two "
                "readings exist. The code of the latest is xid_last."},
    DerivedInfo{Derived::kDeviceLost, "device_lost", Unit::kNone,
                "1 when the device fell off the bus (health lost), else 0; never N/A."},
    DerivedInfo{Derived::kThrottleThermal, "throttle_thermal", Unit::kNone,
                "1 when clock_event_reasons has sw thermal (0x20), hw thermal (0x40) or hw "
                "slowdown (0x8) set, else 0."},
    DerivedInfo{Derived::kThrottlePower, "throttle_power", Unit::kNone,
                "1 when clock_event_reasons has sw power cap (0x4) or hw power brake (0x80) set, "
                "else 0."},
};
static_assert(kDerived.size() == static_cast<std::size_t>(Derived::kCount_));

bool Comparable(const FieldInfo& info) { return info.unit != Unit::kText; }

std::optional<double> Number(const Reading& r) {
  if (!r.is_number()) return std::nullopt;
  return r.number();
}

}  // namespace

std::string_view RuleScopeName(RuleScope s) {
  return s == RuleScope::kDevice ? "device" : "process";
}

std::span<const DerivedInfo> DerivedFields() { return kDerived; }

std::string_view FieldRef::key() const {
  return derived ? kDerived[static_cast<std::size_t>(derived_id)].key : Info(field).key;
}

Unit FieldRef::unit() const {
  return derived ? kDerived[static_cast<std::size_t>(derived_id)].unit : Info(field).unit;
}

bool FieldRef::is_process_field() const { return !derived && Info(field).scope == Scope::kProcess; }

std::optional<FieldRef> FindRuleField(std::string_view key, RuleScope scope) {
  for (const DerivedInfo& d : kDerived) {
    if (d.key == key) return FieldRef{.derived = true, .derived_id = d.id};
  }
  std::optional<FieldId> id = FindByKey(key);
  if (!id) return std::nullopt;
  const FieldInfo& info = Info(*id);
  if (!Comparable(info)) return std::nullopt;
  if (info.scope == Scope::kDevice ||
      (info.scope == Scope::kProcess && scope == RuleScope::kProcess)) {
    return FieldRef{.field = *id};
  }
  return std::nullopt;
}

std::vector<std::string_view> ValidFieldNames(RuleScope scope) {
  std::vector<std::string_view> names;
  for (const FieldInfo& info : Catalogue()) {
    if (FindRuleField(info.key, scope)) names.push_back(info.key);
  }
  for (const DerivedInfo& d : kDerived) names.push_back(d.key);
  std::sort(names.begin(), names.end());
  return names;
}

std::string ValidFieldList(RuleScope scope) {
  std::string out;
  for (std::string_view name : ValidFieldNames(scope)) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

FieldMask SourceFields(const FieldRef& ref) {
  FieldMask m;
  if (!ref.derived) {
    Set(m, ref.field);
    return m;
  }
  switch (ref.derived_id) {
    case Derived::kEccUncorrectedIncrease:
      Set(m, FieldId::kEccErrorsUncorrectedVolatile);
      break;
    case Derived::kXidErrors:
      Set(m, FieldId::kXidErrorsTotal);
      break;
    case Derived::kThrottleThermal:
    case Derived::kThrottlePower:
      Set(m, FieldId::kClockEventReasons);
      break;
    case Derived::kProcessCount:
    case Derived::kDeviceLost:
    case Derived::kCount_:
      break;
  }
  return m;
}

std::optional<double> ValueOf(const FieldRef& ref, const EvalContext& ctx) {
  const DeviceSample& dev = *ctx.device;
  if (!ref.derived) {
    if (Info(ref.field).scope == Scope::kProcess) {
      return ctx.process != nullptr ? Number(ctx.process->fields[ref.field]) : std::nullopt;
    }
    return Number(dev.fields[ref.field]);
  }
  switch (ref.derived_id) {
    case Derived::kProcessCount:
      if (dev.health != DeviceHealth::kOk) return std::nullopt;
      return static_cast<double>(dev.processes.size());
    case Derived::kEccUncorrectedIncrease:
      return ctx.derived != nullptr ? ctx.derived->ecc_uncorrected_increase : std::nullopt;
    case Derived::kXidErrors:
      return ctx.derived != nullptr ? ctx.derived->xid_errors : std::nullopt;
    case Derived::kDeviceLost:
      return dev.health == DeviceHealth::kLost ? 1.0 : 0.0;
    case Derived::kThrottleThermal:
    case Derived::kThrottlePower: {
      std::optional<double> reasons = Number(dev.fields[FieldId::kClockEventReasons]);
      if (!reasons || *reasons < 0) return std::nullopt;
      auto bits = static_cast<std::uint64_t>(*reasons);
      std::uint64_t mask =
          ref.derived_id == Derived::kThrottleThermal ? kThermalThrottleBits : kPowerThrottleBits;
      return (bits & mask) != 0 ? 1.0 : 0.0;
    }
    case Derived::kCount_:
      break;
  }
  return std::nullopt;
}

}  // namespace gpuwatch::rules
