#include "export/snapshot_leases.h"

#include "export/snapshot_json.h"

namespace gpuwatch {
namespace {

using nlohmann::json;

void PutLease(json& device, const host::LeaseTable& table, LeaseKeys keys) {
  const host::Lease* lease = nullptr;
  const auto fields = device.find("fields");
  if (fields != device.end() && fields->is_object()) {
    const auto uuid = fields->find("uuid");
    if (uuid != fields->end() && uuid->is_string()) lease = table.Find(uuid->get<std::string>());
  }
  if (lease != nullptr) {
    device["lease"] = LeaseToJson(*lease);
  } else if (keys == LeaseKeys::kEveryDevice) {
    device["lease"] = nullptr;
  }
}

}  // namespace

void AddLeases(json& snapshot, const host::LeaseTable& table, LeaseKeys keys) {
  if (snapshot.contains("devices")) {
    for (json& d : snapshot.at("devices")) {
      PutLease(d, table, keys);
      if (!d.contains("mig_devices")) continue;
      for (json& m : d.at("mig_devices")) PutLease(m, table, keys);
    }
  }
  if (keys == LeaseKeys::kEveryDevice || !table.queue.empty()) {
    snapshot["lease_queue"] = LeasesToJson(table)["queue"];
  }
}

}  // namespace gpuwatch
