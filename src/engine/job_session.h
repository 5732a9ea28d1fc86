// The job session behind `gpuwatch run`: starts the job with GPUWATCH_SOCKET
// (and CUDA_VISIBLE_DEVICES when given), samples the GPUs while it runs,
// feeds every snapshot and what the job reports to the pipeline, enforces
// the memory limit, forwards signals, keeps the job's GPU leases while it
// lives, and ends with the job: its report (summary, leak verdict) and the
// data of the HTML report. Printing is the front end's (hooks).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/job/job_summary.h"
#include "engine/claim.h"
#include "engine/pipeline.h"
#include "engine/source.h"
#include "report/report_recorder.h"

namespace gpuwatch::engine {

struct JobOptions {
  std::vector<std::string> command;           // argv; argv[0] is searched on PATH
  std::map<std::string, std::string> env;     // added to the job's environment
  std::vector<int> cuda_to_nvml;              // CUDA device k is NVML GPU cuda_to_nvml[k]
  std::chrono::milliseconds interval{100};    // between samples
  std::optional<std::uint64_t> memory_limit;  // of the job's processes, in bytes
  std::chrono::milliseconds grace{10'000};    // SIGTERM to SIGKILL under the limit
  std::filesystem::path proc_dir = "/proc";   // where the job's process tree is read
};

struct JobHooks {
  // A signal caught by the front end, to forward to the job; 0: none. Polled
  // every 50 ms.
  std::function<int()> take_signal;
  // Every event, as it happens (the front end shows the notable ones).
  std::function<void(const Event&)> event;
  // Something worth saying that changes nothing (a forwarded signal, a bad
  // message on the socket); quiet front ends drop it.
  std::function<void(const std::string&)> notice;
  // Something said even when quiet: the memory limit acting on the job, a
  // lease that does not name it.
  std::function<void(const std::string&)> warning;
};

struct JobOutcome {
  std::optional<int> exit_status;  // 128 + N after signal N; none: it never started
  Status spawn_error;              // why it never started
  JobReport report;
  report::ReportRecorder recorder;  // the HTML report's data
};

// Runs the job to its end. `source` none: unmonitored (no samples, no memory
// limit). `held`, when set, are the job's leases: the job is added as a
// holder once started, and they are given back (reset) when it ends. An error means
// the job socket could not be made (nothing was started).
Result<JobOutcome> RunJob(const JobOptions& options, std::optional<Source> source,
                          Pipeline& pipeline, std::optional<HeldLeases>& held,
                          const JobHooks& hooks);

// Whether the pipeline's event is one `run` shows as it happens: diagnoses,
// leak verdicts and forecasts, lost GPUs (alerts are written by their
// rules' `log` action).
bool NotableJobEvent(const Event& event);

}  // namespace gpuwatch::engine
