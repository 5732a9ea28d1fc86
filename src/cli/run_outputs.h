// What `gpuwatch run` says and writes besides its job: why the job runs
// unmonitored, and at its end the summary (stderr), --json and --report.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "analysis/job/job_summary.h"
#include "gpuwatch/status.h"
#include "report/report_recorder.h"

namespace gpuwatch::cli {

// Why OpenSource failed, on one line and without its advice.
std::string OneLineReason(const Status& why);

// The one line said when the job runs without GPU monitoring: why, and what
// is lost.
std::string UnmonitoredWarning(const std::string& reason);

struct JobOutputs {
  std::vector<std::string> command;
  std::string hostname;
  std::string demo_scenario;  // "" unless --demo
  std::string report;         // --report FILE, "" none
  bool quiet = false;         // no summary on stderr
};

// The summary on stderr (unless quiet), the JSON to `json` (when open) and
// the HTML report (when asked; a failure to write it is said, not fatal).
void WriteJobOutputs(const JobReport& report, const report::ReportRecorder& recorder,
                     const JobOutputs& outputs, std::FILE* json);

}  // namespace gpuwatch::cli
