// Choosing GPUs for the next job (`gpuwatch select`): which GPUs qualify
// under the caller's limits, in which order, and why each other GPU was not
// chosen. Pure: a snapshot in, a choice out.
//
// CUDA_VISIBLE_DEVICES: a job can only use the GPUs it lists. Entries are
// CUDA ordinals or UUIDs (GPU-..., or a unique prefix); as CUDA does, the
// list ends at the first entry that names no GPU. Ordinals are NVML indices
// only under CUDA_DEVICE_ORDER=PCI_BUS_ID (CUDA's default, FASTEST_FIRST,
// may order mixed models otherwise): on a fleet of one model the two orders
// agree; with mixed models and no PCI_BUS_ID, ordinals are an error.
//
// MIG: a GPU in MIG mode is not offered whole; each of its MIG devices is a
// candidate of its own, named "5:1" (MIG device 1 of GPU 5) and given to
// CUDA by its MIG- UUID, the only name CUDA accepts for it. NVML gives no
// utilization for MIG devices: their load is their memory share alone, and
// --max-util rules them out. A request for more than one device gets no MIG
// device: CUDA shows a process only one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuwatch/fields.h"
#include "gpuwatch/snapshot.h"
#include "gpuwatch/status.h"

namespace gpuwatch::select {

enum class Order { kLoad, kMemory, kIndex, kRandom };

struct Criteria {
  int count = 1;
  std::optional<double> min_free_bytes;
  std::optional<double> max_utilization;         // ratio 0..1
  std::optional<double> max_memory_utilization;  // used / total, 0..1
  std::set<int> exclude;                         // NVML indices
  Order order = Order::kLoad;
  std::set<std::string> free_users;  // their processes' memory counts as free
  std::uint64_t seed = 0;            // kRandom
  // GPUs or MIG devices given to other jobs (leases), by UUID, with who holds
  // them ("leased to pid 12 (alice: python train.py)").
  std::map<std::string, std::string> taken;
};

struct Candidate {
  int index = 0;                 // NVML index; a MIG device's parent
  std::optional<int> mig_index;  // set for MIG devices
  std::string id;                // "3", or "5:1" for a MIG device
  std::string uuid;
  double free_bytes = 0;  // with free_users' memory counted as free
  double utilization = 0;
  double memory_utilization = 0;
  std::vector<std::string> reasons;  // why it does not qualify; empty: it does
};

struct Choice {
  std::vector<Candidate> chosen;      // in order
  std::vector<Candidate> candidates;  // every GPU considered, with its reasons
};

// The UUIDs of the GPUs and MIG devices CUDA_VISIBLE_DEVICES lets a job use
// (nullopt: unset, all). A listed GPU makes its MIG devices visible too.
Result<std::optional<std::set<std::string>>> VisibleDevices(std::optional<std::string_view> visible,
                                                            std::optional<std::string_view> order,
                                                            const Snapshot& snapshot);

// Chooses `criteria.count` GPUs or MIG devices among `visible` (all when
// nullopt). Fewer are chosen when fewer qualify; the Choice still lists every
// candidate's reasons.
Choice Choose(const Snapshot& snapshot, const Criteria& criteria,
              const std::optional<std::set<std::string>>& visible);

// The fields Choose and VisibleDevices read of a GPU or MIG device: a claim
// reads only these (and the processes only for free_users), not the ~90 of
// a full sample (a first read of PCIe throughput alone takes 20 ms).
FieldMask SelectionFields();

// "order must be load, memory, index or random".
Result<Order> ParseOrder(std::string_view text);

}  // namespace gpuwatch::select
