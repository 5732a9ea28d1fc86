// What `gpuwatch doctor` checks, as findings the front end prints: the
// environment (container, PID namespace), the driver and its NVML, each
// GPU's health, persistence, MIG and unreadable fields, and whether the GPU
// processes can be attributed. Each finding says what to do about it.
#pragma once

#include <filesystem>
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

// `host_proc`: the --host-proc given ("" none). Without a driver
// (`have_driver` false) the PID namespace is not judged: there are no GPU
// processes to resolve.
std::vector<Finding> CheckEnvironment(const host::Environment& env, const std::string& host_proc,
                                      bool have_driver = true);
// When NVML could not be used: the driver's device nodes under `dev_dir`
// (/dev/nvidia*), and the way in that fits where gpuwatch runs (a container:
// the NVIDIA Container Toolkit and --gpus all; the host: the driver) and
// GPUWATCH_NVML_LIBRARY (`library_env`, "" when unset) for a library
// elsewhere.
std::vector<Finding> CheckNoDriver(const host::Environment& env,
                                   const std::filesystem::path& dev_dir,
                                   const std::string& library_env);
// The library, the driver's versions, NVML's missing entry points, the GPU count.
std::vector<Finding> CheckDriver(const BackendInfo& info, const Snapshot& snapshot);
// Each GPU: lost, persistence off, MIG, fields it cannot read and why. A
// finding true of several GPUs of one model is one line naming them all
// ("GPUs 0-3, 6 (NVIDIA H200): ...").
std::vector<Finding> CheckDevices(const Snapshot& snapshot);
// Can the GPU processes be attributed (user, command, container) from here?
std::vector<Finding> CheckProcessVisibility(const Snapshot& snapshot);

}  // namespace gpuwatch::engine
