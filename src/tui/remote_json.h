// The times of a remote daemon's JSON API documents, read with their types
// checked (core/json_members.h reads the other members).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "core/json_members.h"

namespace gpuwatch::tui {

using TimePoint = std::chrono::system_clock::time_point;

// "2026-11-30T06:13:55.355Z" (core/time_text.h's Rfc3339) -> time point;
// nullopt when malformed or outside 1970..2200.
std::optional<TimePoint> ParseRfc3339(std::string_view text);
// Unix seconds (the API's "time", api_documents' UnixSeconds) to the
// nearest microsecond; nullopt outside 1970..2200.
std::optional<TimePoint> FromUnixSeconds(double seconds);

// The member `key` of `object` as a time: UnixTime reads a number of Unix
// seconds, IsoTime RFC 3339 text. Absent or null: nullopt; another form is
// noted in `m` (JsonMembers::Wrong) and gives nullopt.
std::optional<TimePoint> UnixTime(JsonMembers& m, const nlohmann::json& object, std::string_view at,
                                  std::string_view key);
std::optional<TimePoint> IsoTime(JsonMembers& m, const nlohmann::json& object, std::string_view at,
                                 std::string_view key);

}  // namespace gpuwatch::tui
