// What the action runner's tests share: runner options and a log sink that
// collects lines from the runner's worker thread.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "alerts/action_runner.h"

namespace gpuwatch::alerts::testing {

inline ActionRunnerOptions Options(LogSink log = {}, bool allow_commands = false,
                                   std::size_t queue_capacity = 1024, std::string host = {}) {
  ActionRunnerOptions o;
  o.log = std::move(log);
  o.allow_commands = allow_commands;
  o.queue_capacity = queue_capacity;
  o.host = std::move(host);
  return o;
}

// Collects log lines from the runner's worker thread.
struct Lines {
  std::mutex mu;
  std::vector<std::string> lines;
  LogSink Sink() {
    return [this](std::string_view l) {
      std::lock_guard lock(mu);
      lines.emplace_back(l);
    };
  }
  std::vector<std::string> Get() {
    std::lock_guard lock(mu);
    return lines;
  }
};

}  // namespace gpuwatch::alerts::testing
