// The snapshot as JSON (schema "gpuwatch.snapshot/1", docs/json.md): numeric
// values in base units, catalogue keys, and for every value that is absent a
// null plus its reason under "unavailable". Pure.
#pragma once

#include <nlohmann/json.hpp>

#include "gpuwatch/snapshot.h"

namespace gpuwatch {

inline constexpr std::string_view kSnapshotSchema = "gpuwatch.snapshot/1";

nlohmann::json SnapshotToJson(const Snapshot& snapshot, const std::string& hostname);
nlohmann::json DeviceToJson(const DeviceSample& device);
nlohmann::json ProcessToJson(const ProcessSample& process);
std::string_view VisibilityName(HostProcess::Visibility v);
std::string_view HealthName(DeviceHealth h);  // "ok", "lost", "error", "stale"
std::string_view ProcessTypeName(ProcessSample::Type t);

}  // namespace gpuwatch
