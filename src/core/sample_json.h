// gpuwatch's JSON of devices and processes (schema gpuwatch.snapshot/1,
// docs/json.md) read back, and the names both directions share.
// export/snapshot_json writes it into recordings (JSON Lines) and into the
// API's documents; backends/replay and tui read it back with these, every
// member's type checked (JsonMembers: the first wrong one is named, the rest
// is still read). Keys this version does not know are skipped (a newer
// writer's field).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_members.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch {

std::string_view VisibilityName(HostProcess::Visibility v);
std::string_view HealthName(DeviceHealth h);  // "ok", "lost", "error", "stale"
std::string_view ProcessTypeName(ProcessSample::Type t);

// The enumerator of 0..last whose name (by `name_of`) is `name`.
template <typename Enum, typename NameFn>
std::optional<Enum> FromName(std::string_view name, Enum last, NameFn name_of) {
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    if (name_of(static_cast<Enum>(i)) == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

// `values` (at `values_at` in the document) maps catalogue keys to numbers,
// text for text fields; keys of another scope are skipped.
template <Scope S>
void ReadFieldValues(const nlohmann::json& values, const std::string& values_at, JsonMembers& m,
                     FieldArray<S>& out);
// `owner`'s "fields" (ReadFieldValues) and "unavailable": keys to why the
// value is absent, {"reason", "detail"} or (older recordings) the reason.
template <Scope S>
void ReadFields(const nlohmann::json& owner, const std::string& at, JsonMembers& m,
                FieldArray<S>& out);
// A process object, as ProcessToJson writes it.
ProcessSample ReadProcess(const nlohmann::json& j, const std::string& at, JsonMembers& m);
// The process objects of `device`'s "processes", appended to `out`.
void ReadProcesses(const nlohmann::json& device, const std::string& at, JsonMembers& m,
                   std::vector<ProcessSample>& out);

}  // namespace gpuwatch
