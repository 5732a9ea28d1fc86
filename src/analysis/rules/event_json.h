// The JSON form of an alert event: the webhook body and the file action's
// line (docs/rules.md documents it as version 1).
#pragma once

#include <string>
#include <string_view>

#include "gpuwatch/event.h"

namespace gpuwatch::rules {

// One line, no trailing newline. `host` is the machine's name.
std::string EventJson(const Event& event, std::string_view host);

// RFC 3339 UTC with milliseconds: "2024-05-01T14:23:05.123Z".
std::string Rfc3339(std::chrono::system_clock::time_point t);

}  // namespace gpuwatch::rules
