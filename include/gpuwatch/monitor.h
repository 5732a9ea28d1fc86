// gpuwatch embedded in another program (the Python module, or any C++ user):
// read the GPUs once, or run the sampler with the analysis (alert rules,
// diagnoses, leak detection) on its own threads and take snapshots, events
// and windows of metrics from it; choose GPUs; test a memory series for a
// leak. Everything here is thread-safe and never calls back into the caller:
// results are pulled.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"
#include "gpuwatch/status.h"

namespace gpuwatch {

struct MonitorOptions {
  bool demo = false;      // the simulated demo fleet (fake NVML)
  std::string scenario;   // a fake-NVML scenario file instead (implies demo)
  std::string replay;     // a recording (watch --jsonl / --db) instead of GPUs
  std::string demo_dir;   // where the fake library (lib/) and scenarios/ are, when not beside
                          // the gpuwatch binary (the Python package's data)
  std::string host_proc;  // a host /proc (containers)
  std::chrono::milliseconds interval{1000};
  bool processes = true;
  std::string rules;  // a rule file; empty: the built-in rules
};

// One reading of every GPU, without a thread.
Result<Snapshot> ReadOnce(const MonitorOptions& options);

// Mean, min, max and last of one metric over a window, and how many samples.
struct MetricStats {
  double mean = 0;
  double min = 0;
  double max = 0;
  double last = 0;
  std::uint64_t count = 0;
};

class Monitor {
 public:
  static Result<std::unique_ptr<Monitor>> Start(const MonitorOptions& options);
  virtual ~Monitor() = default;  // stops the threads

  // The newest snapshot (nullptr before the first).
  virtual std::shared_ptr<const Snapshot> Latest() const = 0;
  // Waits up to `timeout` for a snapshot newer than `after`; nullptr if none.
  virtual std::shared_ptr<const Snapshot> WaitNewer(std::uint64_t after,
                                                    std::chrono::milliseconds timeout) const = 0;
  // Events since the previous call, oldest first: alerts firing and
  // resolving, diagnoses, leaks, lost GPUs. At most `capacity` are kept
  // between calls; older ones are dropped and counted.
  virtual std::vector<Event> TakeEvents() = 0;
  virtual std::uint64_t dropped_events() const = 0;

  // Windows of metrics: every snapshot from OpenWindow on is folded into the
  // window's statistics, keyed "gpu0/memory_used_bytes" (numeric device
  // fields of the catalogue) and "host/cpu_ratio" style host fields.
  virtual std::uint64_t OpenWindow() = 0;
  // The window's statistics so far; `reset` starts it afresh. NotFound for an
  // unknown or closed window.
  virtual Result<std::map<std::string, MetricStats>> WindowStats(std::uint64_t window,
                                                                 bool reset) = 0;
  virtual void CloseWindow(std::uint64_t window) = 0;
};

// The snapshot as `gpuwatch --json` prints it (docs/json.md), and an event as
// JSON Lines records it (docs/outputs.md).
std::string SnapshotJson(const Snapshot& snapshot);
std::string EventJson(const Event& event);

// `gpuwatch select` for a program: which GPUs qualify, leased GPUs counted as
// taken. JSON: {"chosen": [candidate...], "candidates": [candidate...]}, a
// candidate being {id, index, mig_index, uuid, free_bytes, utilization,
// memory_utilization, reasons}.
struct SelectRequest {
  int count = 1;
  std::optional<double> min_free_bytes;
  std::optional<double> max_utilization;         // ratio 0..1
  std::optional<double> max_memory_utilization;  // ratio 0..1
  std::vector<int> exclude;
  std::string order = "load";  // load, memory, index, random
  std::vector<std::string> free_users;
};
Result<std::string> SelectJson(const MonitorOptions& options, const SelectRequest& request);

// A verdict on a memory series sampled once per iteration (leak_check).
struct SeriesLeakVerdict {
  bool leak = false;
  double bytes_per_iteration = 0;  // the floor's slope
  double low = 0, high = 0;        // its ~95 % interval
  double confidence = 0;
  std::size_t iterations = 0;
  std::string explanation;
};

// Runs the sawtooth-aware leak detector over `bytes[i]`, one value per
// iteration; a leak must grow by at least `min_bytes_per_iteration`. Needs 16
// iterations or more (InvalidArgument otherwise).
Result<SeriesLeakVerdict> CheckSeriesForLeak(const std::vector<double>& bytes,
                                             double min_bytes_per_iteration);

}  // namespace gpuwatch
