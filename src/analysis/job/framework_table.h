// The framework memory that training jobs report to the daemon over
// `serve --socket` (the line protocol of docs/run.md), kept per process,
// framework and CUDA device, placed on the NVML GPU the process uses, and
// forgotten once the process has left every GPU for a while.
//
// Placement: a job numbers its GPUs as CUDA does (device=0 is its first
// visible GPU), which is not NVML's index. The table takes the GPUs the
// sending process is listed on, in NVML order, and picks the device-th; a
// process on no GPU yet is kept but not shown.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gpuwatch/snapshot.h"

namespace gpuwatch {

struct ProcessFrameworkMemory {
  int gpu = 0;  // NVML index
  std::uint32_t pid = 0;
  std::string framework;                // torch, jax, tensorflow, ...
  std::map<std::string, double> bytes;  // allocated, reserved, active, ...
  std::chrono::system_clock::time_point time;
};

class FrameworkTable {
 public:
  explicit FrameworkTable(std::chrono::seconds grace = std::chrono::seconds(30)) : grace_(grace) {}

  void Report(std::uint32_t pid, const std::string& framework, int cuda_device,
              std::map<std::string, double> bytes, std::chrono::system_clock::time_point time);
  // The entries placed on `snapshot`'s GPUs; drops those whose process has
  // been on no GPU for the grace period (measured in snapshot time).
  std::vector<ProcessFrameworkMemory> Current(const Snapshot& snapshot);

 private:
  struct Entry {
    std::map<std::string, double> bytes;
    std::chrono::system_clock::time_point time;
    std::chrono::system_clock::time_point seen;  // last time the process was on a GPU
  };
  std::chrono::seconds grace_;
  std::map<std::tuple<std::uint32_t, std::string, int>, Entry> entries_;
};

}  // namespace gpuwatch
