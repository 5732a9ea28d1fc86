// Which driver calls are in flight, process-wide: what a hang is reported
// as ("reading GPU 0 has not returned for 12 s"), and what lets a command
// stopped by a signal exit without waiting for a call that never returns
// (engine/signals.h). A scope claims a slot of a fixed lock-free table (a
// few atomic stores): it is taken around a device's whole read or the
// library's opening, never around each field. Thread-safe; OldestCallSince is
// also async-signal-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuwatch {

// The most of a call's description kept, with its terminating NUL.
inline constexpr std::size_t kDriverCallTextSize = 96;

class DriverCallScope {
 public:
  explicit DriverCallScope(std::string what);
  ~DriverCallScope();
  DriverCallScope(const DriverCallScope&) = delete;
  DriverCallScope& operator=(const DriverCallScope&) = delete;

 private:
  int slot_;  // -1 when every slot was taken
};

struct DriverCall {
  std::string what;
  std::chrono::steady_clock::time_point since;
};

// The call in flight the longest, if any.
std::optional<DriverCall> OldestDriverCall();

// For a signal handler (async-signal-safe: atomics only): the start, in
// steady-clock nanoseconds since its epoch, of the oldest call in flight
// that began before `before_ns`, its description copied into `what`
// (kDriverCallTextSize bytes, NUL-terminated); 0 when there is none.
std::uint64_t OldestCallSince(std::uint64_t before_ns, char* what);

// "reading GPU 0 has not returned for 12 s".
std::string DescribeCall(std::string_view what, std::chrono::milliseconds age);

// DescribeCall of the oldest call running for
// at least `min_age`; nullopt when none is.
std::optional<std::string> DescribeHungCall(std::chrono::milliseconds min_age);

}  // namespace gpuwatch
