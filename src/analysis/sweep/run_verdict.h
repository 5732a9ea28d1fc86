// How one run of a sweep ended: it fit (stopped at its bound, or finished),
// it ran out of GPU memory (exit status with "CUDA out of memory",
// RESOURCE_EXHAUSTED and the like on stderr, or the torch adapter's OOM
// report), or it failed for another reason, which stops the sweep. Pure.
#pragma once

#include <optional>
#include <string>

#include "analysis/sweep/sweep_search.h"

namespace gpuwatch::sweep {

struct RunEnd {
  std::optional<int> exit_status;  // 128 + N after signal N
  bool stopped_at_bound = false;   // the sweep ended it (steps or seconds reached)
  std::string stderr_tail;         // the last part of what it wrote on stderr
  bool oom_report = false;         // gpuwatch.torch's oom_report file appeared
};

struct Classified {
  RunVerdict verdict = RunVerdict::kFits;
  std::string reason;  // "stopped after 50 steps", "CUDA out of memory (stderr)", ...
};

Classified ClassifyRun(const RunEnd& end);

// The stderr line that says out of memory, "" when none does.
std::string OomLine(const std::string& text);

}  // namespace gpuwatch::sweep
