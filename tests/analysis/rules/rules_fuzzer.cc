// libFuzzer target for the rule file parser (YAML, conditions, quantities,
// durations, message templates). Built only with -DGPUWATCH_BUILD_FUZZERS=ON.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/rules/engine.h"
#include "analysis/rules/rule_parser.h"
#include "gpuwatch/snapshot.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gpuwatch::rules::ParseOptions options;
  options.allow_commands = size % 2 == 0;
  gpuwatch::Result<gpuwatch::rules::RuleSet> set =
      gpuwatch::rules::ParseRules(text, "fuzz.yaml", options);
  if (set) {
    // Whatever parses must evaluate: an empty device and one with a process.
    gpuwatch::rules::RuleEngine engine(std::move(*set));
    gpuwatch::Snapshot s;
    s.devices.resize(1);
    s.devices[0].processes.resize(1);
    (void)engine.Evaluate(s);
    s.time += std::chrono::hours(1);
    s.devices[0].processes.clear();
    (void)engine.Evaluate(s);
  }
  return 0;
}
