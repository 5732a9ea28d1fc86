// The snapshot as JSON (schema "gpuwatch.snapshot/1", docs/json.md): numeric
// values in base units, catalogue keys, and for every value that is absent a
// null plus its reason under "unavailable". Pure.
#pragma once

#include <nlohmann/json.hpp>

#include "core/sample_json.h"  // the names of health, visibility and process types
#include "gpuwatch/snapshot.h"

namespace gpuwatch {

inline constexpr std::string_view kSnapshotSchema = "gpuwatch.snapshot/1";

nlohmann::json SnapshotToJson(const Snapshot& snapshot, const std::string& hostname);
nlohmann::json DeviceToJson(const DeviceSample& device);
nlohmann::json ProcessToJson(const ProcessSample& process);

}  // namespace gpuwatch
