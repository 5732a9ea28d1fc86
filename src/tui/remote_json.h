// Unix-seconds times of a remote daemon's JSON API documents, read with their
// types checked (core/json_members.h reads the other members).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "core/json_members.h"

namespace gpuwatch::tui {

using TimePoint = std::chrono::system_clock::time_point;

// Unix seconds (the API's "time", api_documents' UnixSeconds) to the
// nearest microsecond; nullopt outside 1970..2200.
std::optional<TimePoint> FromUnixSeconds(double seconds);

// The member `key` of `object` as a number of Unix seconds. Absent or null:
// nullopt; another form is noted in `m` (JsonMembers::Wrong) and gives
// nullopt. (RFC 3339 text: JsonMembers::Time.)
std::optional<TimePoint> UnixTime(JsonMembers& m, const nlohmann::json& object, std::string_view at,
                                  std::string_view key);

}  // namespace gpuwatch::tui
