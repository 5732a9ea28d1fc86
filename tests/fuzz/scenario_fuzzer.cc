// libFuzzer target: the fake NVML's scenario parser (YAML in, a scenario or a
// message with line:column out).
#include <cstddef>
#include <cstdint>
#include <string>

#include "scenario_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)gpuwatch::fake_nvml::ParseScenarioText(text, "fuzz.yaml");
  return 0;
}
