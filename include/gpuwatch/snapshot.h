// Sample and snapshot types. A Snapshot is immutable once published: the
// sampler builds it, everyone else reads it through shared_ptr<const Snapshot>.
#pragma once

#include <array>
#include <cassert>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuwatch/fields.h"
#include "gpuwatch/reading.h"

namespace gpuwatch {

// The readings of one scope, indexed by FieldId.
template <Scope S>
class FieldArray {
 public:
  static constexpr FieldRange kRange = RangeOf(S);
  Reading& operator[](FieldId id) { return values_[Slot(id)]; }
  const Reading& operator[](FieldId id) const { return values_[Slot(id)]; }
  static constexpr bool Holds(FieldId id) {
    auto i = static_cast<std::size_t>(id);
    return i >= kRange.first && i < kRange.first + kRange.count;
  }
  friend bool operator==(const FieldArray&, const FieldArray&) = default;

 private:
  static std::size_t Slot(FieldId id) {
    assert(Holds(id) && "field of another scope");
    return static_cast<std::size_t>(id) - kRange.first;
  }
  std::array<Reading, kRange.count> values_{};
};

using HostFields = FieldArray<Scope::kHost>;
using DeviceFields = FieldArray<Scope::kDevice>;
using ProcessFields = FieldArray<Scope::kProcess>;

// Who a GPU process is on the host (src/host fills it).
struct HostProcess {
  enum class Visibility : std::uint8_t {
    kVisible,       // read from /proc
    kOtherPidNs,    // NVML's host pid is not in our PID namespace
    kExited,        // gone between NVML's list and the /proc read
    kNoPermission,  // /proc entry exists but could not be read
  };
  Visibility visibility = Visibility::kExited;
  std::string name;     // comm
  std::string command;  // cmdline, NULs as spaces
  std::string user;     // name, or the uid as text when unknown
  std::optional<std::uint32_t> uid;
  // Start time: clock ticks since boot (the identity key) and wall clock.
  std::uint64_t start_ticks = 0;
  std::optional<std::chrono::system_clock::time_point> start_time;
  std::string container_id;       // 12+ hex chars, "" if none
  std::string container_runtime;  // docker, containerd, cri-o, podman
  std::string pod_uid;
  // Kubernetes names, from the kubelet's log links (host/kube_pods.h); "" off
  // Kubernetes or when the node's /var/log/containers is not readable.
  std::string pod;
  std::string pod_namespace;
  std::string container_name;
  std::string slurm_job_id;
  friend bool operator==(const HostProcess&, const HostProcess&) = default;
};

struct ProcessSample {
  enum class Type : std::uint8_t { kCompute, kGraphics, kComputeAndGraphics };
  std::uint32_t pid = 0;
  Type type = Type::kCompute;
  std::optional<std::uint32_t> gpu_instance_id;  // MIG only
  std::optional<std::uint32_t> compute_instance_id;
  ProcessFields fields;  // used memory, utilizations, rss, cpu
  HostProcess host;
  friend bool operator==(const ProcessSample&, const ProcessSample&) = default;
};

// kStale: the driver has not answered for a while (a hung call); the values
// are the last ones read, kept for reference, not current.
enum class DeviceHealth : std::uint8_t { kOk, kLost, kError, kStale };

struct DeviceSample {
  int index = 0;                                 // NVML index; for a MIG device, its parent's index
  std::optional<int> mig_index;                  // set for MIG devices (children of `index`)
  std::optional<std::uint32_t> gpu_instance_id;  // MIG devices only
  std::optional<std::uint32_t> compute_instance_id;
  DeviceHealth health = DeviceHealth::kOk;
  std::string health_detail;
  DeviceFields fields;
  std::vector<ProcessSample> processes;
  friend bool operator==(const DeviceSample&, const DeviceSample&) = default;
};

struct Snapshot {
  std::chrono::system_clock::time_point time;
  std::uint64_t sequence = 0;  // 1, 2, ... per sampler; 0 for one-shot reads
  // The sampler is hung in a driver call: this is the last good snapshot,
  // re-published by the watchdog. Values are as of `time`.
  bool stale = false;
  std::chrono::microseconds sample_duration{0};  // how long reading it took
  bool demo = false;                             // simulated data: every output says DEMO
  std::string source;                            // "nvml:/path/libnvidia-ml.so.1" or "replay:file"
  HostFields host;
  std::vector<DeviceSample> devices;      // physical GPUs in index order
  std::vector<DeviceSample> mig_devices;  // MIG children, by parent then mig index
};

}  // namespace gpuwatch
