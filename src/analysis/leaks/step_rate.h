// Training steps per second from step marks (ObserveStep), so leak rates can
// also be given per step. Keeps the last few marks only. Not thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

namespace gpuwatch::leaks {

class StepRate {
 public:
  explicit StepRate(std::size_t max_marks = 64) : max_marks_(max_marks < 2 ? 2 : max_marks) {}

  // A mark: `step` reached at `time`. A step lower than the previous one (a
  // restart) starts over.
  void Observe(std::chrono::system_clock::time_point time, std::uint64_t step);

  // Steps per second over the kept marks; nullopt with fewer than two marks or
  // no progress.
  std::optional<double> steps_per_s() const;

 private:
  struct Mark {
    std::chrono::system_clock::time_point time;
    std::uint64_t step;
  };
  std::size_t max_marks_;
  std::deque<Mark> marks_;
};

}  // namespace gpuwatch::leaks
