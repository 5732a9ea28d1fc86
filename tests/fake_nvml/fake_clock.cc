#include "fake_clock.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "units.h"

namespace gpuwatch::fake_nvml {
namespace {

// gpuwatch_fake_set_time's value; NaN: none, the environment says.
std::atomic<double> g_time_override{std::numeric_limits<double>::quiet_NaN()};

}  // namespace

ScenarioTime ScenarioClock::Now() const {
  ScenarioTime now;
  if (const double t = g_time_override.load(); !std::isnan(t)) {
    now.t = std::max(0.0, t);
    now.frozen = true;
    return now;
  }
  if (const char* frozen = std::getenv("GPUWATCH_FAKE_TIME"); frozen != nullptr && *frozen) {
    if (auto t = ParseDurationSeconds(frozen)) {
      now.t = std::max(0.0, *t);
      now.frozen = true;
      return now;
    }
  }
  if (mode_ == ClockMode::kWall) {
    const double unix_s =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    now.cycle = static_cast<std::int64_t>(std::floor(unix_s / period_s_));
    now.t = (unix_s - static_cast<double>(now.cycle) * period_s_) * time_scale_;
  } else {
    now.t = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_init_).count() *
            time_scale_;
  }
  return now;
}

std::uint64_t ScenarioClock::TimestampUs(const ScenarioTime& now) const {
  if (now.frozen) {
    // Frozen time still stamps samples near the real clock (taken once per
    // process), so readers that reject stale samples keep them.
    static const std::uint64_t base_us =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
    return base_us + static_cast<std::uint64_t>(std::llround(now.t * 1e6));
  }
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

std::uint64_t ScenarioClock::TimestampUsAt(const ScenarioTime& now, double t) const {
  const double scale = now.frozen ? 1.0 : time_scale_;
  const auto back_us = static_cast<std::uint64_t>(std::llround((now.t - t) * 1e6 / scale));
  return TimestampUs(now) - back_us;
}

}  // namespace gpuwatch::fake_nvml

// A test in the process that loaded the library moves frozen time without
// touching the environment while the library's callers read it.
extern "C" __attribute__((visibility("default"))) void gpuwatch_fake_set_time(double t) {
  gpuwatch::fake_nvml::g_time_override.store(t);
}
