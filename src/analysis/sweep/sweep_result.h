// What a sweep found, as plain values: each run (value, copies, how it
// ended, memory, throughput), the memory fit and the largest value that fits,
// the boundary of --search / --until-oom, and the concurrency verdict; its
// JSON (schema gpuwatch.sweep/1) and its terminal table. Pure.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/sweep/concurrency.h"
#include "analysis/sweep/sweep_fit.h"
#include "analysis/sweep/sweep_search.h"

namespace gpuwatch::sweep {

struct CopyRecord {
  std::uint32_t pid = 0;
  std::optional<int> exit_status;
  RunVerdict verdict = RunVerdict::kFits;
  std::string reason;
  double peak_process_bytes = 0;  // NVML, its whole process tree, at one moment
  std::optional<double> framework_allocated_bytes, framework_reserved_bytes;  // peaks
  // The peak of the framework's free pieces of segments still partly in use
  // (torch's inactive_split_bytes): cache its allocator cannot give back.
  std::optional<double> framework_inactive_split_bytes;
  std::uint64_t steps = 0;
  std::optional<double> throughput;  // steps per second (or runs per second)
  std::string output_tail;           // the end of what it printed, kept on failure
};

// A copy's NVML memory less the cache its framework's allocator would give
// back short of memory: reserved - allocated - inactive split, the cached
// segments wholly free (torch frees them and retries before it fails). None
// unless the job reported all three.
std::optional<double> NeededBytes(const CopyRecord& copy);

struct RunRecord {
  long value = 0;  // 0: the command takes no value
  int copies = 1;
  RunVerdict verdict = RunVerdict::kFits;  // the worst of its copies
  std::string reason;
  double peak_device_bytes = 0;
  double seconds = 0;
  std::vector<CopyRecord> copy;

  double PeakProcessBytes() const;  // the largest copy's
  // What the largest copy needs (NeededBytes); none unless every copy reported
  // allocated, reserved and inactive split memory.
  std::optional<double> PeakNeededBytes() const;
  double TotalThroughput() const;
};

struct SweepResult {
  // kBisect: --search's baseline, doubling from the first value then
  // bisection, no fit consulted (Lightning's BatchSizeFinder).
  enum class Mode { kValues, kSearch, kBisect, kUntilOom, kConcurrency };
  Mode mode = Mode::kValues;
  std::vector<std::string> command;
  int gpu = 0;
  std::string gpu_name;
  double total_bytes = 0;
  double free_bytes = 0;  // before the first run: what the job may take
  double margin = 0.10;
  std::vector<RunRecord> runs;  // in the order run
  std::optional<MemoryFit> fit;
  // The fit is of NeededBytes (every fitted run had it), not of NVML's memory.
  bool fit_of_needed = false;
  std::string fit_note;  // why there is no fit
  std::optional<Capacity> capacity;
  std::optional<Boundary> boundary;
  std::optional<int> doubling_trials;  // kSearch: what doubling + bisection would need
  std::optional<long> configured;      // --until-oom: the first value
  std::optional<ConcurrencyVerdict> holds;
  std::string stopped;  // why the sweep ended early; "" when it did not
  bool demo = false;
};

std::string VerdictName(RunVerdict v);
// "bs 32: fits, 12.50 GiB, 48.1 steps/s (ran to its bound, 3.1 s)".
std::string ProgressLine(const RunRecord& run);
std::string RenderSweep(const SweepResult& result);
// What the table's last lines say (fit, largest batch, boundary, how many
// copies the GPU holds, why it stopped), one line each without the newline;
// also the JSON's "verdict".
std::vector<std::string> VerdictLines(const SweepResult& result);
nlohmann::json SweepToJson(const SweepResult& result);

}  // namespace gpuwatch::sweep
