// Diagnoses: explanations a person can act on, from a run of snapshots.
//  - pre-allocation: a process takes >= 70 % of a GPU within seconds of
//    starting and stays flat: TensorFlow/JAX reserving memory up front, so
//    nvidia-smi's number says nothing about real use;
//  - starved GPU: utilization low for minutes while a process holds memory,
//    with a hint (the process is CPU-bound, or the input pipeline is slow);
//  - throttling: how long each GPU ran with clocks held down, and why.
// Consumes snapshots in order on one thread; no I/O.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch {

struct DiagnosisOptions {
  double preallocation_ratio = 0.70;              // of the GPU's memory
  std::chrono::seconds preallocation_within{30};  // of the process starting
  // Then flat this long: enough samples to see it is not a ramp, and soon
  // enough that a short job is told (10 s of the first sample at most).
  std::chrono::seconds preallocation_flat_for{5};
  int preallocation_min_samples = 3;      // ... over at least this many samples
  double preallocation_flat_band = 0.02;  // of the GPU's memory
  double starved_utilization = 0.30;
  std::chrono::seconds starved_for{300};
  double starved_min_memory_bytes = 1024.0 * 1024 * 1024;  // a process holds at least this
  double cpu_bound_ratio = 0.90;                           // of one core
  std::chrono::seconds throttle_report_after{60};          // continuous, per episode
};

// A process diagnosed as having pre-allocated its GPU's memory, while it lives.
struct Preallocation {
  int gpu = 0;
  ProcessKey process;
  double bytes = 0;  // what it held when diagnosed
  double share = 0;  // of the GPU's memory, 0..1
};

// A per-GPU diagnosis that stands now: reported and its condition still holds
// (kind "starved" or "throttling", the source of its event), in the words of
// the event that reported it.
struct StandingDiagnosis {
  int gpu = 0;
  std::string kind;
  Severity severity = Severity::kInfo;
  std::string message = {};
  std::chrono::system_clock::time_point since = {};  // when it was reported
  std::optional<ProcessKey> process = {};            // the starved GPU's holder
};

// Time with clocks held down, per reason, for one GPU.
struct ThrottleTotals {
  std::chrono::milliseconds thermal{0};
  std::chrono::milliseconds power{0};
  std::chrono::milliseconds any{0};  // any limiting reason (idle excluded)
};

class Diagnoser {
 public:
  explicit Diagnoser(DiagnosisOptions options = {});
  // The fields Observe reads (a sampler for a Diagnoser reads at least these).
  static FieldMask Fields();
  std::vector<Event> Observe(const Snapshot& snapshot);
  const std::map<int, ThrottleTotals>& throttle_totals() const { return throttle_; }
  // The processes diagnosed with pre-allocation that still run.
  std::vector<Preallocation> Preallocated() const;
  // The starved and throttling diagnoses that stand, by GPU then kind.
  std::vector<StandingDiagnosis> Standing() const;
  // Total time each GPU spent starved (low utilization while memory is held).
  const std::map<int, std::chrono::milliseconds>& starved_totals() const { return starved_total_; }

 private:
  struct ProcessTrack {
    bool seen_from_start = false;  // first seen soon after it started
    bool big_at_first_sight = false;
    // Since the process first held >= preallocation_ratio of the GPU:
    std::optional<std::chrono::system_clock::time_point> big_since;
    double min_bytes = 0;
    double max_bytes = 0;
    double share = 0;     // of the GPU when reported
    int big_samples = 0;  // samples since big_since
    bool reported = false;
    bool disqualified = false;
  };
  struct GpuTrack {
    std::optional<std::chrono::system_clock::time_point> starved_since;
    std::optional<Event> starved_report;  // while it stands
    std::optional<std::chrono::system_clock::time_point> throttled_since;
    std::optional<Event> throttle_report;
  };

  void CheckPreallocation(const Snapshot& s, const DeviceSample& d, std::vector<Event>& out);
  void Starvation(const Snapshot& s, const DeviceSample& d, std::vector<Event>& out);
  void Throttling(const Snapshot& s, const DeviceSample& d, std::vector<Event>& out);

  DiagnosisOptions options_;
  std::map<std::pair<int, ProcessKey>, ProcessTrack> processes_;
  std::map<int, GpuTrack> gpus_;
  std::map<int, ThrottleTotals> throttle_;
  std::map<int, std::chrono::milliseconds> starved_total_;
  std::optional<std::chrono::system_clock::time_point> last_time_;
};

}  // namespace gpuwatch
