// GPU leases (host/leases.h, docs/select.md) as JSON: one shape for
// `gpuwatch --json` and the JSON API (docs/API.md). Pure.
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

enum class LeaseKeys {
  kEveryDevice,  // "lease" on every device (null when free), "lease_queue" always
  kWhereLeased,  // only on leased devices, "lease_queue" only while someone waits
};

// Adds the leases to a SnapshotToJson document: "lease" on the devices and
// MIG devices they name (by UUID), and "lease_queue" at the top.
void AddLeases(nlohmann::json& snapshot, const host::LeaseTable& table, LeaseKeys keys);

}  // namespace gpuwatch
