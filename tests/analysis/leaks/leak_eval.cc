// leak_eval: the evaluation table of docs/leaks.md. Runs every case of
// leak_cases.cc through the real NvmlBackend and the fake NVML library, with
// the leak detector (default options) and the seed's baseline rule, and prints
// a markdown table and the detector's first alarm of each case.
//
//   leak_eval [SCENARIO_DIR [FAKE_LIBRARY]]
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "leak_evaluation.h"

namespace {

using gpuwatch::leaks::eval::MethodResult;

std::string Clock(double t_s) {
  const auto minutes = static_cast<long long>(t_s / 60 + 0.5);
  return fmt::format("{}:{:02}", minutes / 60, minutes % 60);
}

std::string FirstAlarm(const MethodResult& m) {
  if (m.detection_delay_s) return fmt::format("after {}", Clock(*m.detection_delay_s));
  if (!m.alarms.empty() && m.false_alarms > 0) return "—";
  return "none";
}

std::string FalseAlarms(const MethodResult& m) {
  if (m.false_alarms == 0) return "0";
  for (const auto& a : m.alarms) {
    if (!m.detection_delay_s || a.t_s >= 0) {
      return fmt::format("{} (first at {})", m.false_alarms, Clock(a.t_s));
    }
  }
  return std::to_string(m.false_alarms);
}

}  // namespace

int main(int argc, char** argv) {
  gpuwatch::leaks::eval::EvalPaths paths{GPUWATCH_SOURCE_DIR "/scenarios/leaks",
                                         GPUWATCH_BINARY_DIR "/lib/libnvidia-ml-fake.so"};
  if (argc > 1) paths.scenario_dir = argv[1];
  if (argc > 2) paths.fake_library = argv[2];

  std::puts(
      "| case | what | leak starts | detector: detected after | detector: false alarms | "
      "rate found (true) | baseline: detected after | baseline: false alarms |");
  std::puts("| --- | --- | --- | --- | --- | --- | --- | --- |");
  std::string notes;
  int failures = 0;
  for (const auto& c : gpuwatch::leaks::eval::AllCases()) {
    const auto r = gpuwatch::leaks::eval::RunCase(c, paths);
    if (!r.error.empty()) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), r.error.c_str());
      ++failures;
      continue;
    }
    std::string rate = "—";
    if (r.final_estimate) {
      rate = fmt::format("{:.2f} MiB/min ({:.4g})", r.final_estimate->rate_mib_per_min(),
                         c.true_rate_mib_per_min);
    }
    std::puts(fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |", c.name, c.what,
                          c.is_leak() ? Clock(*c.leak_start_s) : "no leak",
                          c.is_leak() ? FirstAlarm(r.detector) : "—", FalseAlarms(r.detector), rate,
                          c.is_leak() ? FirstAlarm(r.baseline) : "—", FalseAlarms(r.baseline))
                  .c_str());
    if (!r.detector.alarms.empty()) {
      const auto& a = r.detector.alarms.front();
      notes += fmt::format("- {} at {}: {}\n", c.name, Clock(a.t_s), a.message);
    }
  }
  std::puts("\nFirst detector alarm of each case (scenario time h:mm):\n");
  std::fputs(notes.c_str(), stdout);
  return failures == 0 ? 0 : 1;
}
