// Reading of one `devices:` entry and of process entries (internal to the
// scenario parser). Throw ScenarioError on bad input.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>

#include "scenario.h"

namespace gpuwatch::fake_nvml {

// Device at position `index` of `devices:`, with model defaults filled in.
DeviceSpec ParseDevice(const YAML::Node& node, unsigned index);

// A process entry; `device` receives the top-level form's `device:` key and
// must be null for per-device entries (which then reject that key).
ProcessSpec ParseProcess(const YAML::Node& node, const std::string& where,
                         std::optional<unsigned>* device);

}  // namespace gpuwatch::fake_nvml
