// GPU leases (host/leases.h, docs/select.md) as JSON: one shape for
// `gpuwatch --json`, the JSON API (docs/API.md) and the daemon's documents.
// Pure.
#pragma once

#include <nlohmann/json.hpp>

#include "host/leases.h"

namespace gpuwatch {

// {"device", "uuid", "pid", "user", "command", "ticket", "since",
//  "holders": [{"pid", "start_ticks"}]}. pid is the first holder's (the
// process that took the lease); since is ISO-8601 UTC.
nlohmann::json LeaseToJson(const host::Lease& lease);
// {"ticket", "position" (1: served next), "pid", "user", "command", "count",
//  "wants", "since"}.
nlohmann::json WaiterToJson(const host::Waiter& waiter, int position);
// {"leases": [...], "queue": [...]}: every entry of the table, the queue in
// the order it is served.
nlohmann::json LeasesToJson(const host::LeaseTable& table);

}  // namespace gpuwatch
