// What `gpuwatch run` reports at the end of a job: duration, peak memory of
// the devices and of the job's own processes, utilization statistics, energy,
// time starved and throttled, alerts, diagnoses, leaks, marks and framework
// memory. Accumulates from snapshots in bounded memory (utilization goes into
// a 0.1 % histogram, so percentiles need no sample list). Single-threaded.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch {

struct UtilizationStats {
  std::uint64_t samples = 0;
  double mean = 0;
  double median = 0;
  double p95 = 0;
};

struct JobProcessPeak {
  int gpu = 0;
  std::uint32_t pid = 0;
  std::string command;  // the newest command line read, else "[comm]"
  double peak_bytes = 0;
};

// A GPU's framework memory: each counter summed over the processes that
// report on that GPU (ranks sharing it, a worker beside the trainer), as of
// each one's latest report while it is among the job's processes; the peak
// is that sum's highest.
struct FrameworkMemory {
  std::string framework;
  std::map<std::string, double> last;  // allocated, reserved, ... (bytes)
  std::map<std::string, double> peak;
  int processes = 0;  // how many reported on this GPU
};

// The peaks of a framework's counters, each named once: "peak_allocated"
// (the framework's own high-water mark) and "allocated" are one counter,
// "allocated", at the higher of the two. Sorted by name.
std::vector<std::pair<std::string, double>> FrameworkPeaks(const FrameworkMemory& f);

// The GPUs `run --gpus auto:N` leased for the job, and how long it queued.
struct JobLease {
  std::vector<std::string> devices;  // "3", "5:1": as chosen
  std::uint64_t ticket = 0;
  std::chrono::system_clock::time_point granted;
  std::chrono::milliseconds waited{0};
};

// A leak verdict or out-of-memory forecast raised during the job, for one
// series (a GPU the job used, or one of the job's processes); the newest of
// its events.
struct JobLeak {
  int gpu = 0;
  std::optional<std::uint32_t> pid;
  bool verdict = false;  // a leak verdict (else only forecasts)
  bool cleared = false;  // its last event cleared it (growth stopped, process ended)
  bool ended = false;    // ... because its process had ended (still growing, as far as known)
  std::optional<double> rate_bytes_per_s;
  std::optional<std::chrono::seconds> time_to_full;
  std::chrono::system_clock::time_point first;  // when it was first raised
  std::string message;                          // of the newest verdict / forecast
};

struct JobReport {
  std::chrono::system_clock::time_point started;
  std::chrono::milliseconds duration{0};
  std::vector<std::string> command;
  std::optional<int> exit_status;
  std::set<int> gpus;  // GPUs the job's processes used
  std::map<int, double> peak_device_used_bytes;
  std::map<int, double> device_total_bytes;
  double peak_job_bytes = 0;  // all the job's processes at one moment
  std::vector<JobProcessPeak> processes;
  std::map<int, UtilizationStats> utilization;
  std::map<int, double> energy_joules;
  std::map<int, std::chrono::milliseconds> starved;
  std::map<int, std::chrono::milliseconds> throttled;
  std::vector<Event> events;                      // alerts, diagnoses, leaks, guard steps
  std::map<std::string, std::string> last_marks;  // step / epoch / phase -> value
  std::uint64_t steps = 0;
  std::map<int, FrameworkMemory> framework_memory;  // by device
  std::vector<JobLeak> leaks;
  // "leak suspected: ...", "out-of-memory forecast: ...", "too short for a leak
  // verdict: ..." or "no leak suspected".
  std::string leak_verdict = "no leak suspected";
  std::chrono::milliseconds sampled{0};  // from the first to the last snapshot
  std::optional<JobLease> lease;
  // Why the GPUs were not sampled at all (`run` without a usable driver runs
  // the job unmonitored); "" when they were.
  std::string unmonitored;
  // A whole machine's recording (every GPU and process), not a job: the
  // summary speaks of processes, never of "the job".
  bool whole_machine = false;
  // What gpuwatch added to the job's environment (GPUWATCH_SOCKET,
  // CUDA_VISIBLE_DEVICES, ...); set by the job session.
  std::map<std::string, std::string> environment;
};

class JobSummary {
 public:
  // `every_device`: summarize every GPU, not only those the job's processes
  // used (a report of a whole machine's recording).
  JobSummary(std::vector<std::string> command, std::chrono::system_clock::time_point started,
             bool every_device = false);
  // The span of samples a leak verdict needs (LeakOptions::verdict_min_span):
  // a job sampled for less is "too short for a leak verdict". Default 10 min.
  void SetLeakVerdictSpan(std::chrono::seconds span) { leak_verdict_span_ = span; }
  // One snapshot and the pids that belong to the job now.
  void Observe(const Snapshot& snapshot, const std::set<std::uint32_t>& job_pids);
  void AddEvent(const Event& event);
  void AddMark(const std::string& kind, const std::string& value);
  // One report of `pid` (nullopt: a sender that gave none) on NVML GPU `device`.
  void AddFrameworkMemory(int device, const std::string& framework,
                          const std::map<std::string, double, std::less<>>& bytes,
                          std::optional<std::uint32_t> pid = std::nullopt);
  JobReport Finish(std::chrono::system_clock::time_point ended, std::optional<int> exit_status,
                   const std::map<int, std::chrono::milliseconds>& starved,
                   const std::map<int, std::chrono::milliseconds>& throttled) const;

 private:
  // The latest report of every process, per GPU (0: a sender without a pid).
  std::map<int, std::map<std::uint32_t, std::map<std::string, double, std::less<>>>>
      framework_reports_;
  struct Histogram {
    std::array<std::uint32_t, 1001> bins{};  // 0.0 .. 100.0 %, 0.1 % wide
    std::uint64_t count = 0;
    double sum = 0;
  };
  JobReport report_;
  bool every_device_ = false;
  std::chrono::seconds leak_verdict_span_{600};
  std::optional<std::chrono::system_clock::time_point> first_sample_, last_sample_;
  std::set<std::uint32_t> live_;      // the job's processes as of the latest snapshot
  std::set<std::uint32_t> job_pids_;  // every pid of the job seen on a GPU
  std::map<int, Histogram> util_;
  std::map<int, std::pair<double, double>> energy_first_last_;
  // Power integrated over the samples (trapezoids), for a job shorter than
  // the energy counter's period (the counter did not advance while it ran).
  struct PowerIntegral {
    double joules = 0;
    std::optional<std::chrono::system_clock::time_point> last;
    double last_watts = 0;
  };
  std::map<int, PowerIntegral> power_;
  std::map<std::pair<int, ProcessKey>, JobProcessPeak> peaks_;
};

// A duration as the summary shows it: "12.5s", "2m 05s", "1h 02m 03s".
std::string JobDurationText(std::chrono::milliseconds d);

// The summary as label / value rows (a continuation row has an empty label):
// the text summary prints them, the HTML report shows them as a table.
struct SummaryRow {
  std::string label;
  std::string value;
};
// job_report.cc: the rows, the text and the JSON.
std::vector<SummaryRow> JobReportRows(const JobReport& report);
std::string RenderJobReport(const JobReport& report);
nlohmann::json JobReportToJson(const JobReport& report);

}  // namespace gpuwatch
