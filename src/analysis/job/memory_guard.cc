#include "analysis/job/memory_guard.h"

#include <fmt/format.h>

namespace gpuwatch {
namespace {

std::string GiB(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024)); }

}  // namespace

MemoryGuard::MemoryGuard(std::uint64_t limit_bytes, std::chrono::milliseconds grace)
    : limit_(limit_bytes), grace_(grace) {}

MemoryGuard::Step MemoryGuard::Observe(std::chrono::steady_clock::time_point now,
                                       double job_bytes) {
  const double limit = static_cast<double>(limit_);
  if (killed_) return {};
  if (terminated_at_) {
    if (now - *terminated_at_ < grace_) return {};
    killed_ = true;
    return {Action::kKill,
            fmt::format("the job is still running {} s after SIGTERM: sending SIGKILL",
                        std::chrono::duration_cast<std::chrono::seconds>(grace_).count())};
  }
  if (job_bytes >= limit) {
    terminated_at_ = now;
    return {
        Action::kTerminate,
        fmt::format("the job's GPU memory ({}) reached its --memory-limit of {}: sending SIGTERM; "
                    "SIGKILL follows in {} s if it has not exited",
                    GiB(job_bytes), GiB(limit),
                    std::chrono::duration_cast<std::chrono::seconds>(grace_).count())};
  }
  if (!warned_ && job_bytes >= 0.9 * limit) {
    warned_ = true;
    return {Action::kWarn,
            fmt::format("the job's GPU memory ({}) is at {:.0f} % of its --memory-limit of {}; "
                        "at 100 % it will be stopped",
                        GiB(job_bytes), job_bytes / limit * 100, GiB(limit))};
  }
  return {};
}

}  // namespace gpuwatch
