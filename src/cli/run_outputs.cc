#include "cli/run_outputs.h"

#include <fmt/format.h>

#include <iostream>
#include <string_view>

#include "report/report_html.h"

namespace gpuwatch::cli {

std::string OneLineReason(const Status& why) {
  constexpr std::string_view kAdvice = "\nRun `gpuwatch doctor`";  // added by OpenSource
  const std::string& m = why.message();
  std::string reason;
  for (std::size_t i = 0; i < m.size() && m.compare(i, kAdvice.size(), kAdvice) != 0; ++i) {
    if (m[i] != '\n') {
      reason += m[i];
      continue;
    }
    while (i + 1 < m.size() && m[i + 1] == ' ') ++i;
    reason += ' ';
  }
  if (!reason.empty() && reason.back() != '.') reason += '.';
  return reason;
}

std::string UnmonitoredWarning(const std::string& reason) {
  return fmt::format(
      "gpuwatch run: warning: the job runs without GPU monitoring (no GPU samples, alerts, leak "
      "checks or --memory-limit): {} Run `gpuwatch doctor` for a diagnosis; add --require-gpu to "
      "refuse to start instead.",
      reason);
}

void WriteJobOutputs(const JobReport& job_report, const report::ReportRecorder& recorder,
                     const JobOutputs& outputs, std::FILE* json) {
  if (!outputs.quiet) std::cerr << RenderJobReport(job_report);
  if (json != nullptr) {
    const std::string text = JobReportToJson(job_report).dump(2) + "\n";
    std::fwrite(text.data(), 1, text.size(), json);
  }
  if (!outputs.report.empty()) {
    std::string command;
    for (const auto& a : outputs.command) command += (command.empty() ? "" : " ") + a;
    report::ReportMeta meta;
    meta.title = "gpuwatch run — " + command.substr(0, 120);
    meta.hostname = outputs.hostname;
    meta.source = "run";
    meta.demo = outputs.demo_scenario;
    auto page = report::RenderHtml(
        recorder.ToJson(meta, JobReportRows(job_report), JobReportToJson(job_report)));
    const Status written = page ? report::WriteFileAtomically(outputs.report, *page) : page.error();
    if (!written.ok()) {
      std::cerr << "gpuwatch: --report: " << written.message() << "\n";
    } else if (!outputs.quiet) {
      std::cerr << "report       " << outputs.report << "\n";
    }
  }
}

}  // namespace gpuwatch::cli
