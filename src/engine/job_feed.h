// What training jobs send on a job socket (transport/job_socket.h), fed to
// the pipeline the same way for `run` and `serve`: framework memory (its
// "allocated" bytes judge leaks, also per step) and marks (step, epoch,
// phase).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/pipeline.h"
#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"
#include "transport/job_socket.h"

namespace gpuwatch::engine {

struct FrameworkReading {
  std::chrono::system_clock::time_point time;
  std::optional<std::uint32_t> pid;  // the sender's (SO_PEERCRED), else what it said
  int gpu = 0;                       // NVML index
  std::string framework;
  std::map<std::string, double, std::less<>> bytes;
};

struct JobFeedHooks {
  // The NVML index of the device a job calls `device` (run maps through the
  // CUDA_VISIBLE_DEVICES it set); none: the same number. A report that names
  // its device's UUID is filed under the GPU of that UUID in `devices` instead.
  std::function<int(int device)> gpu;
  std::function<void(const FrameworkReading&)> memory;  // each memory report
  std::function<void(const std::string& kind, const std::string& value)> mark;
};

struct JobFeed {
  // In arrival order: each mark as its event (with the sender's pid), and
  // the leak events the messages caused.
  std::vector<Event> events;
  std::vector<std::string> errors;  // malformed or dropped messages, to be said
};

// Everything received since the previous call; `devices`: the latest
// snapshot, whose UUIDs place the reports that name one.
JobFeed DrainJobs(JobSocket& socket, Pipeline& pipeline, const JobFeedHooks& hooks = {},
                  const Snapshot* devices = nullptr);

// The index of the GPU in `devices` whose UUID is `uuid` (case and a "GPU-"
// prefix aside: frameworks print it either way); nullopt when none is.
std::optional<int> GpuOfUuid(const Snapshot& devices, std::string_view uuid);

}  // namespace gpuwatch::engine
