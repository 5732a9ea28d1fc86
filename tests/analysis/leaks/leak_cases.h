// The leak evaluation set: one file under scenarios/leaks/ per case (a
// fake-NVML scenario, or a gpuwatch.jsonl/1 recording), with its label: which
// pid leaks, from when, at what true rate, and for the growth that is not a
// leak (warm-ups, allocator fills, evaluation phases) when it ends, so an OOM
// forecast it raised can be judged. Shared by leak_eval and the tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuwatch::leaks::eval {

// Growth that is not a leak, in scenario seconds: memory may rise in
// [start_s, end_s]; an OOM forecast it raises must be cleared within 60 s of
// end_s.
struct Episode {
  double start_s = 0;
  double end_s = 0;
};

// From at_s on the leak grows at mib_per_min (a leak that speeds up).
struct RateChange {
  double at_s = 0;
  double mib_per_min = 0;
};

enum class CaseSource {
  kScenario,   // <name>.yaml, read through NvmlBackend and the fake NVML
  kRecording,  // <name>.jsonl, played through ReplayBackend, one sample per read
};

struct LeakCase {
  std::string name = {};  // the file name without its extension
  std::string what = {};  // one line for the table
  CaseSource source = CaseSource::kScenario;
  // Scenarios: the sample step and the length of the run. A recording plays
  // all its samples at their own times (t = 0 at its first sample); give its
  // step and span here all the same (the label test checks the span).
  double interval_s = 1;
  double duration_s = 2 * 3600;
  // Leaks: the GPU, the leaking pid, when it starts and its true rate from then
  // (the average for stepwise and bursty leaks), and later rates if it speeds up.
  int gpu = 0;
  std::optional<std::uint32_t> leaking_pid = std::nullopt;
  std::optional<double> leak_start_s = std::nullopt;
  double true_rate_mib_per_min = 0;
  std::vector<RateChange> rate_changes = {};
  // Growth that is not a leak (for a leak: before it starts, or on other pids).
  std::vector<Episode> growth = {};
  // The longest rise of the case's steady shape (a sawtooth's period): a
  // forecast raised outside `growth` must be cleared within cycle_s + 60 s.
  double cycle_s = 0;
  // The latest a leak may be warned of after it starts (the budget is
  // min(10 % of its time to OOM, this)).
  double max_warning_delay_s = 45 * 60;
  // Why a case departs from the targets' defaults (shown in the table).
  std::string note = {};

  bool is_leak() const { return leak_start_s.has_value(); }
  // The true leak rate at t (MiB/min; 0 before the leak starts or for quiet work).
  double RateAt(double t_s) const;
  std::string FileName() const;  // name + ".yaml" or ".jsonl"
};

// Every case of scenarios/leaks/: the leaks first, then the quiet work.
const std::vector<LeakCase>& AllCases();
const LeakCase* FindCase(const std::string& name);

}  // namespace gpuwatch::leaks::eval
