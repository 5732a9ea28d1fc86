// A whole `gpuwatch sweep`: which runs to make (the values; then --search's,
// --bisect's or --until-oom's next values from the planner; or each --concurrency
// level), made one after another on a SweepRunner, and what they add up to
// (the fit, the largest value under the margin, the boundary, the
// concurrency verdict). Stops at the first run that fails for another
// reason than memory, and when asked to. docs/sweep.md.
#pragma once

#include <functional>
#include <vector>

#include "analysis/sweep/sweep_result.h"
#include "engine/sweep_runner.h"

namespace gpuwatch::engine {

struct SweepPlan {
  sweep::SweepResult::Mode mode = sweep::SweepResult::Mode::kValues;
  std::vector<long> values;  // in order; 0 alone: the command takes no value
  // Runs after `values` whose value the fit of the runs before places
  // (sweep::PlacedValue): the default sweep is 8, 16 and 2 placed runs.
  int placed = 0;
  std::vector<int> concurrency;  // copies per level (kConcurrency)
  double margin = 0.10;
  long max_value = 1L << 20;
  int max_trials = 16;  // search, bisect and until-oom, initial values included
};

struct SweepHooks {
  std::function<void(const sweep::RunRecord&)> progress;  // after each run
  std::function<void(long value, int copies)> starting;   // before each run
  std::function<int()> stop;                              // a signal: stop now
};

sweep::SweepResult RunSweep(SweepRunner& runner, const SweepPlan& plan, const SweepHooks& hooks);

// Fills the fit, the capacity, the boundary and the concurrency verdict from
// result.runs (used by RunSweep; pure).
void Conclude(const SweepPlan& plan, sweep::SweepResult& result);

}  // namespace gpuwatch::engine
