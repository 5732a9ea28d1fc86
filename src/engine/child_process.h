// The job `gpuwatch run` starts: spawned in its own process group (so a signal
// reaches its whole tree), given the terminal's foreground while it runs, and
// reaped with its exit status (128 + N when a signal ended it).
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuwatch/status.h"

namespace gpuwatch::engine {

struct SpawnOptions {
  bool foreground = true;   // give it the terminal's foreground (when we own it)
  std::string output_path;  // "" : inherit stdout and stderr; else both go to this file
};

class ChildProcess {
 public:
  // Starts argv[0] (searched on PATH) with the current environment plus `env`.
  static Result<ChildProcess> Spawn(const std::vector<std::string>& argv,
                                    const std::map<std::string, std::string>& env,
                                    const SpawnOptions& options = {});
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // Sends `signal` to the child's whole process group.
  void Signal(int signal) const;
  // The exit status once it has ended (128 + N for signal N), without waiting.
  std::optional<int> Poll();

 private:
  ChildProcess(pid_t pid, bool took_terminal) : pid_(pid), took_terminal_(took_terminal) {}
  void GiveTerminalBack();
  pid_t pid_ = -1;
  bool took_terminal_ = false;
  std::optional<int> status_;
};

}  // namespace gpuwatch::engine
