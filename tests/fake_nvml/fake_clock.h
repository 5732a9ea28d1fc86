// Scenario time: what t is for a call made now. `clock: init` counts from the
// first nvmlInit in the process, `clock: wall` is unix time modulo the period
// (so separate one-shot commands see values move), both times time_scale.
// GPUWATCH_FAKE_TIME=<seconds> freezes t, and then timestamps come from a
// base taken once per process (near the real clock) plus t, so values are
// deterministic and samples are not stale. gpuwatch_fake_set_time(t), which
// the library exports, freezes t as well, ahead of the environment (NaN
// gives it back), for a test that moves time while other threads call in.
// A value type: copy it freely.
#pragma once

#include <chrono>
#include <cstdint>

#include "scenario.h"

namespace gpuwatch::fake_nvml {

struct ScenarioTime {
  double t = 0;            // scenario seconds, in [0, period * scale) for wall clocks
  std::int64_t cycle = 0;  // completed periods (wall clock), for monotonic counters
  bool frozen = false;
};

class ScenarioClock {
 public:
  ScenarioClock() = default;
  ScenarioClock(ClockMode mode, double period_s, double time_scale,
                std::chrono::steady_clock::time_point first_init)
      : mode_(mode), period_s_(period_s), time_scale_(time_scale), first_init_(first_init) {}

  // Reads the override and GPUWATCH_FAKE_TIME on every call, so tests can move
  // time between calls.
  ScenarioTime Now() const;

  // CPU timestamp in microseconds since the epoch for a sample taken at `now`.
  std::uint64_t TimestampUs(const ScenarioTime& now) const;
  // The CPU timestamp of an earlier scenario time `t` <= now.t.
  std::uint64_t TimestampUsAt(const ScenarioTime& now, double t) const;

 private:
  ClockMode mode_ = ClockMode::kInit;
  double period_s_ = 3600;
  double time_scale_ = 1;
  std::chrono::steady_clock::time_point first_init_{};
};

}  // namespace gpuwatch::fake_nvml
