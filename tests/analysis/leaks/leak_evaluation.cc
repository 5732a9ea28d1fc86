#include "leak_evaluation.h"

#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "analysis/leaks/leak_tracker.h"
#include "backends/nvml/nvml_backend.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::leaks::eval {
namespace {

using Clock = std::chrono::system_clock;

// The fake's timestamps start at 2026-01-01T00:00:00Z; any origin works here.
Clock::time_point At(double t_s) {
  return Clock::time_point(std::chrono::seconds(1767225600)) +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(t_s));
}

double SecondsOf(Clock::time_point t) { return std::chrono::duration<double>(t - At(0)).count(); }

// The seed's rule: alarm once per device and process when used > 1.5 × its
// first sample.
class Baseline {
 public:
  void Observe(const Snapshot& s, double t_s, std::vector<Alarm>& alarms) {
    for (const DeviceSample& d : s.devices) {
      Check({d.index, 0}, d.fields[FieldId::kMemoryUsedBytes], t_s, d.index, std::nullopt, alarms);
      for (const ProcessSample& p : d.processes) {
        Check({d.index, p.pid}, p.fields[FieldId::kProcessUsedMemoryBytes], t_s, d.index, p.pid,
              alarms);
      }
    }
  }

 private:
  struct State {
    double initial = 0;
    bool fired = false;
  };
  void Check(std::pair<int, std::uint32_t> key, const Reading& used, double t_s, int gpu,
             std::optional<std::uint32_t> pid, std::vector<Alarm>& alarms) {
    if (!used.is_number()) return;
    auto [it, fresh] = states_.try_emplace(key, State{used.number(), false});
    if (fresh || it->second.fired || used.number() <= 1.5 * it->second.initial) return;
    it->second.fired = true;
    alarms.push_back(Alarm{t_s, gpu, pid, "used > 1.5 x initial"});
  }
  std::map<std::pair<int, std::uint32_t>, State> states_;
};

void Score(const LeakCase& c, MethodResult& m) {
  for (const Alarm& a : m.alarms) {
    const bool right_subject = !a.pid || a.pid == c.leaking_pid;
    if (c.is_leak() && right_subject && a.t_s >= *c.leak_start_s) {
      if (!m.detection_delay_s) m.detection_delay_s = a.t_s - *c.leak_start_s;
    } else {
      ++m.false_alarms;
    }
  }
}

}  // namespace

CaseResult RunCase(const LeakCase& c, const EvalPaths& paths, const LeakOptions& options) {
  CaseResult r;
  r.leak_case = c;
  const std::string scenario = paths.scenario_dir + "/" + c.name + ".yaml";
  setenv("GPUWATCH_FAKE_SCENARIO", scenario.c_str(), 1);
  setenv("GPUWATCH_FAKE_TIME", "0", 1);
  nvml::NvmlOptions o;
  o.library_path = paths.fake_library;
  auto backend = nvml::NvmlBackend::Open(o);
  if (!backend) {
    r.error = backend.error().message();
    return r;
  }
  LeakTracker tracker(options);
  Baseline baseline;
  for (double t = 0; t <= c.duration_s + 1e-9; t += c.interval_s) {
    setenv("GPUWATCH_FAKE_TIME", std::to_string(t).c_str(), 1);
    Snapshot s;
    s.time = At(t);
    for (int i = 0; i < (*backend)->DeviceCount(); ++i) {
      DeviceSample d;
      (*backend)->ReadDevice(i, AllFields(), true, d);
      s.devices.push_back(std::move(d));
    }
    baseline.Observe(s, t, r.baseline.alarms);
    for (Event& e : tracker.Observe(s)) {
      if (e.kind == Event::Kind::kLeakSuspected) {
        r.detector.alarms.push_back(Alarm{SecondsOf(e.time), e.gpu.value_or(-1),
                                          e.process ? std::optional(e.process->pid) : std::nullopt,
                                          e.message});
      }
      r.events.push_back(std::move(e));
    }
  }
  if (c.leaking_pid) {
    for (const LeakReport& rep : tracker.Reports()) {
      if (rep.subject.process && rep.subject.process->pid == *c.leaking_pid) {
        r.final_estimate = rep.estimate;
      }
    }
  }
  Score(c, r.detector);
  Score(c, r.baseline);
  return r;
}

}  // namespace gpuwatch::leaks::eval
