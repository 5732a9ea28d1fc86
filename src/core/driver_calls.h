// Which driver calls are in flight, process-wide: what a hang is reported
// as ("reading GPU 0 has not returned for 12 s"), and what lets a command
// stopped by a signal exit without waiting for a call that never returns
// (cli/signals.h). A scope costs a mutex and a map entry: it is taken around
// a device's whole read or the library's opening, never around each field.
// Thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace gpuwatch {

class DriverCallScope {
 public:
  explicit DriverCallScope(std::string what);
  ~DriverCallScope();
  DriverCallScope(const DriverCallScope&) = delete;
  DriverCallScope& operator=(const DriverCallScope&) = delete;

 private:
  unsigned long long id_;
};

struct DriverCall {
  std::string what;
  std::chrono::steady_clock::time_point since;
};

// The call in flight the longest, if any.
std::optional<DriverCall> OldestDriverCall();

// "reading GPU 0 has not returned for 12 s".
std::string DescribeCall(std::string_view what, std::chrono::milliseconds age);

// DescribeCall of the oldest call running for
// at least `min_age`; nullopt when none is.
std::optional<std::string> DescribeHungCall(std::chrono::milliseconds min_age);

}  // namespace gpuwatch
