#include "analysis/rules/builtin_rules.h"

#include <cstdio>
#include <cstdlib>

#include "analysis/rules/rule_parser.h"

namespace gpuwatch::rules {

std::string_view BuiltinRulesYaml() {
  return R"yaml(version: 1
rules:
  - name: gpu_memory_high
    condition: memory_used_ratio > 90%
    for: 30s
    clear: memory_used_ratio < 85%
    severity: warning
    message: "GPU {gpu}: memory {value} used (over 90% for 30s)"
  - name: gpu_temperature_high
    condition: temperature_gpu_celsius > 80C
    for: 30s
    clear: temperature_gpu_celsius < 75C
    severity: warning
    message: "GPU {gpu}: temperature {value} (over 80°C for 30s)"
  - name: gpu_starved
    condition: utilization_gpu_ratio < 30% and process_count > 0
    for: 5m
    clear: utilization_gpu_ratio > 40% or process_count == 0
    severity: warning
    message: "GPU {gpu}: utilization {value} for 5 min while {process_count} process(es) hold memory: input pipeline or a CPU-bound process?"
  - name: gpu_ecc_uncorrected
    condition: ecc_errors_uncorrected_increase > 0
    clear_for: 10m
    severity: critical
    message: "GPU {gpu}: {value} new uncorrected ECC error(s); drain the GPU and check nvidia-smi -q -d ECC"
  - name: gpu_xid
    condition: xid_errors > 0
    clear_for: 10m
    severity: critical
    message: "GPU {gpu}: {value} new XID error(s), the latest XID {xid_last}; see dmesg and NVIDIA's XID catalogue"
  - name: gpu_lost
    condition: device_lost == 1
    severity: critical
    message: "GPU {gpu} fell off the bus (GPU_IS_LOST)"
  - name: gpu_throttled_thermal
    condition: throttle_thermal == 1
    for: 30s
    severity: warning
    message: "GPU {gpu}: clocks held down by heat for 30s ({temperature_gpu_celsius})"
  - name: gpu_throttled_power
    condition: throttle_power == 1
    for: 5m
    severity: info
    message: "GPU {gpu}: clocks held down by the power limit for 5 min ({power_draw_watts})"
)yaml";
}

RuleSet BuiltinRules() {
  Result<RuleSet> set = ParseRules(BuiltinRulesYaml(), kBuiltinSource);
  if (!set) {
    // A programming error caught by the tests; never a runtime condition.
    std::fprintf(stderr, "gpuwatch: built-in rules: %s\n", set.error().message().c_str());
    std::abort();
  }
  return std::move(*set);
}

}  // namespace gpuwatch::rules
