// Runs one evaluation case: the scenario is read through the real NvmlBackend
// and the fake NVML library at frozen scenario times (GPUWATCH_FAKE_TIME), the
// snapshots go to a LeakTracker and to the seed's baseline rule ("used > 1.5 ×
// initial → leak", initial = first sample of each device and process), and the
// alarms are scored against what the case says.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/leaks/leak_detector.h"
#include "gpuwatch/event.h"
#include "leak_cases.h"

namespace gpuwatch::leaks::eval {

struct Alarm {
  double t_s = 0;  // scenario seconds
  int gpu = 0;
  std::optional<std::uint32_t> pid;  // nullopt: the device
  std::string message;
};

struct MethodResult {
  std::vector<Alarm> alarms;                // every alarm raised, in time order
  std::optional<double> detection_delay_s;  // first true alarm minus leak start
  int false_alarms = 0;  // alarms on a quiet case, before the leak, or on a healthy pid
};

struct CaseResult {
  LeakCase leak_case;
  MethodResult detector;
  MethodResult baseline;
  std::vector<Event> events;  // the tracker's events
  // The leaking pid's estimate at the end of the run (leaks only).
  std::optional<LeakEstimate> final_estimate;
  std::string error;  // the backend could not be opened
};

struct EvalPaths {
  std::string scenario_dir;  // .../scenarios/leaks
  std::string fake_library;  // .../lib/libnvidia-ml-fake.so
};

CaseResult RunCase(const LeakCase& c, const EvalPaths& paths, const LeakOptions& options = {});

}  // namespace gpuwatch::leaks::eval
