#include "analysis/rules/builtin_rules.h"

#include <array>
#include <cstdio>
#include <cstdlib>

#include "analysis/rules/message.h"

namespace gpuwatch::rules {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

constexpr std::array kRows = {
    BuiltinRule{"gpu_memory_high", "memory_used_ratio > 90%", seconds(30),
                "memory_used_ratio < 85%", seconds(0), Severity::kWarning,
                "GPU {gpu}: memory {value} used (over 90% for 30s)"},
    BuiltinRule{"gpu_temperature_high", "temperature_gpu_celsius > 80C", seconds(30),
                "temperature_gpu_celsius < 75C", seconds(0), Severity::kWarning,
                "GPU {gpu}: temperature {value} (over 80°C for 30s)"},
    BuiltinRule{"gpu_starved", "utilization_gpu_ratio < 30% and process_count > 0", minutes(5),
                "utilization_gpu_ratio > 40% or process_count == 0", seconds(0), Severity::kWarning,
                "GPU {gpu}: utilization {value} for 5 min while {process_count} process(es) hold "
                "memory: input pipeline or a CPU-bound process?"},
    BuiltinRule{"gpu_ecc_uncorrected", "ecc_errors_uncorrected_increase > 0", seconds(0), "",
                minutes(10), Severity::kCritical,
                "GPU {gpu}: {value} new uncorrected ECC error(s); drain the GPU and check "
                "nvidia-smi -q -d ECC"},
    BuiltinRule{"gpu_xid", "xid_errors > 0", seconds(0), "", minutes(10), Severity::kCritical,
                "GPU {gpu}: {value} new XID error(s), the latest XID {xid_last}; see dmesg and "
                "NVIDIA's XID catalogue"},
    BuiltinRule{"gpu_lost", "device_lost == 1", seconds(0), "", seconds(0), Severity::kCritical,
                "GPU {gpu} fell off the bus (GPU_IS_LOST)"},
    BuiltinRule{"gpu_throttled_thermal", "throttle_thermal == 1", seconds(30), "", seconds(0),
                Severity::kWarning,
                "GPU {gpu}: clocks held down by heat for 30s ({temperature_gpu_celsius})"},
    BuiltinRule{"gpu_throttled_power", "throttle_power == 1", minutes(5), "", seconds(0),
                Severity::kInfo,
                "GPU {gpu}: clocks held down by the power limit for 5 min ({power_draw_watts})"},
};

// A row that does not parse is a programming error the tests catch, never a
// runtime condition.
[[noreturn]] void Broken(const BuiltinRule& row, const Status& s) {
  std::fprintf(stderr, "gpuwatch: built-in rule %.*s: %s\n", static_cast<int>(row.name.size()),
               row.name.data(), s.message().c_str());
  std::abort();
}

Condition MustParse(const BuiltinRule& row, std::string_view text) {
  std::size_t offset = 0;
  Result<Condition> c = ParseCondition(text, RuleScope::kDevice, &offset);
  if (!c) Broken(row, c.error());
  return std::move(*c);
}

}  // namespace

std::span<const BuiltinRule> BuiltinRuleRows() { return kRows; }

RuleSet BuiltinRules() {
  RuleSet set;
  set.source = kBuiltinSource;
  int line = 0;
  for (const BuiltinRule& row : kRows) {
    Rule rule;
    rule.name = row.name;
    rule.where = Location{std::string(kBuiltinSource), ++line, 1};
    rule.condition = MustParse(row, row.condition);
    rule.clear = row.clear.empty() ? Negate(rule.condition) : MustParse(row, row.clear);
    rule.for_duration = row.for_duration;
    rule.clear_for = row.clear_for;
    rule.severity = row.severity;
    std::size_t offset = 0;
    if (Status s = CheckTemplate(row.message, RuleScope::kDevice, &offset); !s.ok()) Broken(row, s);
    rule.message = row.message;
    rule.actions.emplace_back(LogAction{});
    set.rules.push_back(std::move(rule));
  }
  return set;
}

}  // namespace gpuwatch::rules
