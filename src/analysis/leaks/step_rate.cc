#include "analysis/leaks/step_rate.h"

namespace gpuwatch::leaks {

void StepRate::Observe(std::chrono::system_clock::time_point time, std::uint64_t step) {
  if (!marks_.empty() && (step < marks_.back().step || time < marks_.back().time)) marks_.clear();
  marks_.push_back(Mark{time, step});
  while (marks_.size() > max_marks_) marks_.pop_front();
}

std::optional<double> StepRate::steps_per_s() const {
  if (marks_.size() < 2) return std::nullopt;
  const double seconds =
      std::chrono::duration<double>(marks_.back().time - marks_.front().time).count();
  const auto steps = static_cast<double>(marks_.back().step - marks_.front().step);
  if (seconds <= 0 || steps <= 0) return std::nullopt;
  return steps / seconds;
}

}  // namespace gpuwatch::leaks
