// Reads a scenario file (docs/scenarios.md) into a Scenario. Strict: unknown
// keys, bad values and bad units are errors.
#pragma once

#include <optional>
#include <string>

#include "scenario.h"

namespace gpuwatch::fake_nvml {

struct LoadResult {
  std::optional<Scenario> scenario;
  // On failure, one line: "<file>:<line>:<column>: <problem>".
  std::string error;
};

// A regular file of at most 1 MiB (core/text_file.h): a FIFO or a device is
// refused by name, never read.
LoadResult LoadScenarioFile(const std::string& path);
// `name` stands for the file in messages.
LoadResult ParseScenarioText(const std::string& text, const std::string& name);

}  // namespace gpuwatch::fake_nvml
