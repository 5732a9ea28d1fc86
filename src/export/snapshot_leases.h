// GPU leases in snapshot documents: "lease" on the devices they name and
// "lease_queue" (the JSON of each: host/lease_json.h). Pure.
#pragma once

#include <nlohmann/json.hpp>

#include "host/lease_json.h"
#include "host/leases.h"

namespace gpuwatch {

enum class LeaseKeys {
  kEveryDevice,  // "lease" on every device (null when free), "lease_queue" always
  kWhereLeased,  // only on leased devices, "lease_queue" only while someone waits
};

// Adds the leases to a SnapshotToJson document: "lease" on the devices and
// MIG devices they name (by UUID), and "lease_queue" at the top.
void AddLeases(nlohmann::json& snapshot, const host::LeaseTable& table, LeaseKeys keys);

}  // namespace gpuwatch
