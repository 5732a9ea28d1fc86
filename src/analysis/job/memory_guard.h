// The --memory-limit guard of `gpuwatch run`: a budget for the GPU memory of
// the job's processes. Warns at 90 %, asks the job to stop (SIGTERM) at 100 %,
// and kills it (SIGKILL) when it is still running a grace period later. Each
// step comes with the sentence that explains it. Pure: the caller sends the
// signals.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace gpuwatch {

class MemoryGuard {
 public:
  enum class Action { kNone, kWarn, kTerminate, kKill };
  struct Step {
    Action action = Action::kNone;
    std::string explanation;
  };

  MemoryGuard(std::uint64_t limit_bytes, std::chrono::milliseconds grace);
  // The job's GPU memory (bytes, all its processes on all GPUs) at `now`.
  Step Observe(std::chrono::steady_clock::time_point now, double job_bytes);

 private:
  std::uint64_t limit_;
  std::chrono::milliseconds grace_;
  bool warned_ = false;
  std::optional<std::chrono::steady_clock::time_point> terminated_at_;
  bool killed_ = false;
};

}  // namespace gpuwatch
