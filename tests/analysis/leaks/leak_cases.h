// The leak evaluation cases: one scenario file under scenarios/leaks/ each,
// with what is known about it (where the leak starts, which pid leaks, at what
// average rate). Shared by leak_eval and the scenario tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuwatch::leaks::eval {

struct LeakCase {
  std::string name;  // scenario file name without .yaml
  std::string what;  // one line for the table
  double interval_s = 10;
  double duration_s = 4 * 3600;
  // Set for leaks: when the leak starts (scenario seconds), the leaking pid
  // and its average rate.
  std::optional<double> leak_start_s;
  std::optional<std::uint32_t> leaking_pid;
  double true_rate_mib_per_min = 0;
  bool is_leak() const { return leak_start_s.has_value(); }
};

const std::vector<LeakCase>& AllCases();

}  // namespace gpuwatch::leaks::eval
