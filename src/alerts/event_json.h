// The JSON form of an alert event: the webhook body and the file action's
// line (docs/rules.md documents it as version 1).
#pragma once

#include <string>
#include <string_view>

#include "gpuwatch/event.h"

namespace gpuwatch::alerts {

// One line, no trailing newline. `host` is the machine's name.
std::string EventJson(const Event& event, std::string_view host);

}  // namespace gpuwatch::alerts
