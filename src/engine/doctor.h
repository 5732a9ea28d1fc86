// What `gpuwatch doctor` checks, as findings the front end prints: the
// environment (container, PID namespace), the driver and its NVML, each
// GPU's health, persistence, MIG and unreadable fields, and whether the GPU
// processes can be attributed. Each finding says what to do about it.
#pragma once

#include <string>
#include <vector>

#include "gpuwatch/backend.h"
#include "gpuwatch/snapshot.h"
#include "host/environment.h"

namespace gpuwatch::engine {

struct Finding {
  enum class Level { kOk, kInfo, kWarning, kProblem };
  Level level = Level::kOk;
  std::string what;
  std::string advice;  // "" none
};

// `host_proc`: the --host-proc given ("" none).
std::vector<Finding> CheckEnvironment(const host::Environment& env, const std::string& host_proc);
// The library, the driver's versions, NVML's missing entry points, the GPU count.
std::vector<Finding> CheckDriver(const BackendInfo& info, const Snapshot& snapshot);
// Each GPU: lost, persistence off, MIG, fields it cannot read and why.
std::vector<Finding> CheckDevices(const Snapshot& snapshot);
// Can the GPU processes be attributed (user, command, container) from here?
std::vector<Finding> CheckProcessVisibility(const Snapshot& snapshot);

}  // namespace gpuwatch::engine
