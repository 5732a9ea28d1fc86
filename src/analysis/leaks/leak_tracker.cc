#include "analysis/leaks/leak_tracker.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "analysis/leaks/forecast.h"
#include "analysis/leaks/series_check.h"

namespace gpuwatch::leaks {
namespace {

// Free memory is counted at the highest use of this window.
constexpr std::chrono::seconds kPeakWindow{60};
// A warning whose device fills within this is critical.
constexpr std::chrono::minutes kCriticalTimeToFull{30};
// Per-step series: judged every this many new points once 16 exist, over at
// most kStepPointsKept of them; growth below kMinBytesPerStep is not a leak.
constexpr std::size_t kStepCheckEvery = 8;
constexpr std::size_t kStepPointsKept = 1024;
constexpr double kMinBytesPerStep = 4096;

std::string Who(const Subject& s) {
  if (!s.framework.empty()) {
    return s.process ? fmt::format("{} allocated memory of pid {} on GPU {}", s.framework,
                                   s.process->pid, s.gpu)
                     : fmt::format("{} allocated memory on GPU {}", s.framework, s.gpu);
  }
  if (s.process) return fmt::format("pid {} on GPU {}", s.process->pid, s.gpu);
  return fmt::format("GPU {} memory", s.gpu);
}

const char* Verb(const Subject& s) { return s.process && s.framework.empty() ? "leaks" : "grows"; }

std::string PerStep(double bytes) {
  if (bytes >= kMiB) return fmt::format("{:.1f} MiB per step", bytes / kMiB);
  return fmt::format("{:.1f} KiB per step", bytes / 1024);
}

Severity SeverityFor(const std::optional<std::chrono::seconds>& to_full) {
  return to_full && *to_full < kCriticalTimeToFull ? Severity::kCritical : Severity::kWarning;
}

std::string FullIn(const Subject& s, const std::optional<std::chrono::seconds>& to_full) {
  if (!to_full) return "";
  return fmt::format("; GPU {} full in {} at this rate", s.gpu, FormatDuration(*to_full));
}

Event BaseEvent(std::chrono::system_clock::time_point time, const Subject& s, Event::Kind kind) {
  Event ev;
  ev.time = time;
  ev.kind = kind;
  ev.source = "leak";
  ev.gpu = s.gpu;
  ev.process = s.process;
  return ev;
}

}  // namespace

LeakTracker::LeakTracker(const LeakOptions& options) : options_(options) {}

FieldMask LeakTracker::Fields() {
  FieldMask m;
  for (FieldId id :
       {FieldId::kMemoryUsedBytes, FieldId::kMemoryTotalBytes, FieldId::kProcessUsedMemoryBytes}) {
    Set(m, id);
  }
  return m;
}

LeakTracker::Tracked& LeakTracker::Track(const Subject& subject) {
  // Looked up first: a detector is built (seven floor scales, their buffers)
  // only for a new series, not as an argument thrown away at every sample.
  auto it = detectors_.find(subject);
  if (it == detectors_.end()) {
    it = detectors_.emplace(subject, Tracked{LeakDetector(options_), {}, {}, {}, 0, false}).first;
  }
  return it->second;
}

void LeakTracker::Feed(std::chrono::system_clock::time_point time, const Subject& subject,
                       double bytes, std::vector<Event>& out) {
  Tracked& t = Track(subject);
  std::optional<double> free;
  if (auto d = devices_.find(subject.gpu); d != devices_.end()) {
    t.capacity_bytes = d->second.total_bytes;
    free = d->second.free_bytes;
  }
  for (LeakChange c : t.detector.Observe(time, bytes, free)) {
    // One verdict per series: the per-step one may have spoken first.
    if (c == LeakChange::kSuspected && t.step_verdict) continue;
    out.push_back(MakeEvent(time, subject, c, t));
  }
}

std::vector<Event> LeakTracker::Observe(const Snapshot& snapshot) {
  std::vector<Event> events;
  if (snapshot.stale) return events;  // the watchdog's copy of the last one: nothing new
  std::set<int> healthy;
  std::set<Subject> seen;
  for (const DeviceSample& d : snapshot.devices) {
    if (d.health != DeviceHealth::kOk) continue;
    healthy.insert(d.index);
    const Reading& used = d.fields[FieldId::kMemoryUsedBytes];
    const Reading& total = d.fields[FieldId::kMemoryTotalBytes];
    if (used.is_number() && total.is_number() && total.number() > 0) {
      Device& dev = devices_[d.index];
      while (!dev.peaks.empty() && dev.peaks.back().second <= used.number()) dev.peaks.pop_back();
      dev.peaks.emplace_back(snapshot.time, used.number());
      while (dev.peaks.front().first < snapshot.time - kPeakWindow) dev.peaks.pop_front();
      dev.total_bytes = total.number();
      dev.free_bytes = total.number() - dev.peaks.front().second;
      dev.start_ticks.clear();
      for (const ProcessSample& p : d.processes) dev.start_ticks[p.pid] = p.host.start_ticks;
    } else {
      devices_.erase(d.index);
    }
  }
  for (const DeviceSample& d : snapshot.devices) {
    if (d.health != DeviceHealth::kOk) continue;
    const Reading& used = d.fields[FieldId::kMemoryUsedBytes];
    const Subject device{d.index, std::nullopt, {}};
    seen.insert(device);
    if (used.is_number()) Feed(snapshot.time, device, used.number(), events);
  }
  for (const DeviceSample& d : snapshot.devices) {
    if (d.health != DeviceHealth::kOk) continue;
    for (const ProcessSample& p : d.processes) {
      const Subject s{d.index, ProcessKey{p.pid, p.host.start_ticks}, {}};
      seen.insert(s);
      const Reading& used = p.fields[FieldId::kProcessUsedMemoryBytes];
      if (used.is_number()) Feed(snapshot.time, s, used.number(), events);
    }
  }

  // Processes gone from a healthy device have ended: forget them and the
  // framework series they reported.
  std::set<ProcessKey> alive;
  for (const Subject& s : seen) {
    if (s.process) alive.insert(*s.process);
  }
  for (auto it = detectors_.begin(); it != detectors_.end();) {
    const Subject& s = it->first;
    const bool ended = s.process && healthy.contains(s.gpu) &&
                       (s.framework.empty() ? !seen.contains(s) : !alive.contains(*s.process));
    if (!ended) {
      ++it;
      continue;
    }
    const LeakEstimate& e = it->second.detector.estimate();
    if (e.suspected || e.forecast || it->second.step_verdict) {
      const bool verdict = e.suspected || it->second.step_verdict;
      Event ev = BaseEvent(snapshot.time, s,
                           verdict ? Event::Kind::kLeakCleared : Event::Kind::kOomForecastCleared);
      ev.severity = Severity::kInfo;
      ev.value = e.rate_bytes_per_s;
      ev.message =
          fmt::format("{} ended while {} {}", Who(s),
                      verdict ? "suspected of leaking" : "forecast to fill the GPU, growing",
                      FormatRate(e.rate_bytes_per_s));
      events.push_back(std::move(ev));
    }
    it = detectors_.erase(it);
  }
  return events;
}

std::vector<Event> LeakTracker::ObserveFramework(std::chrono::system_clock::time_point time,
                                                 int gpu, std::optional<std::uint32_t> pid,
                                                 const std::string& framework,
                                                 double allocated_bytes) {
  Subject s{gpu, std::nullopt, framework};
  if (pid) {
    if (auto d = devices_.find(gpu); d != devices_.end()) {
      if (auto it = d->second.start_ticks.find(*pid); it != d->second.start_ticks.end()) {
        s.process = ProcessKey{*pid, it->second};
      }
    }
  }
  std::vector<Event> events;
  Feed(time, s, allocated_bytes, events);
  detectors_.at(s).pending_bytes = allocated_bytes;
  return events;
}

std::vector<Event> LeakTracker::ObserveStep(std::chrono::system_clock::time_point time,
                                            std::uint64_t step) {
  steps_.Observe(time, step);
  std::vector<Event> events;
  for (auto& [subject, t] : detectors_) {
    if (subject.framework.empty() || !t.pending_bytes) continue;
    const auto x = static_cast<double>(step);
    if (!t.per_step.empty() && x <= t.per_step.back().t_s) {  // a restart
      t.per_step.clear();
      t.checked_at = 0;
    }
    t.per_step.push_back(Point{x, *t.pending_bytes});
    t.pending_bytes.reset();
    if (t.per_step.size() > kStepPointsKept) {
      t.per_step.erase(t.per_step.begin(), t.per_step.begin() + kStepCheckEvery);
      t.checked_at = t.checked_at > kStepCheckEvery ? t.checked_at - kStepCheckEvery : 0;
    }
    if (auto e = JudgePerStep(time, subject, t)) events.push_back(std::move(*e));
  }
  return events;
}

std::optional<Event> LeakTracker::JudgePerStep(std::chrono::system_clock::time_point time,
                                               const Subject& subject, Tracked& t) const {
  if (t.step_verdict || t.detector.estimate().suspected) return std::nullopt;
  if (t.per_step.size() < 16 || t.per_step.size() < t.checked_at + kStepCheckEvery) {
    return std::nullopt;
  }
  t.checked_at = t.per_step.size();
  const SeriesCheck check = CheckSeries(t.per_step, kMinBytesPerStep);
  if (!check.leak) return std::nullopt;
  t.step_verdict = true;
  const double per_step = check.estimate.rate_bytes_per_s;
  std::optional<std::chrono::seconds> to_full;
  const auto sps = steps_.steps_per_s();
  if (auto d = devices_.find(subject.gpu); d != devices_.end() && sps) {
    to_full = TimeToFull(d->second.free_bytes, 0, per_step * *sps);
  }
  Event ev = BaseEvent(time, subject, Event::Kind::kLeakSuspected);
  ev.severity = SeverityFor(to_full);
  ev.value = sps ? std::optional<double>(per_step * *sps) : std::nullopt;
  ev.time_to_full = to_full;
  ev.message =
      fmt::format("{} grows {} (steps {:.0f} to {:.0f}, {} reports, confidence {:.1f} %){}",
                  Who(subject), PerStep(per_step), t.per_step.front().t_s, t.per_step.back().t_s,
                  t.per_step.size(), 100 * check.estimate.confidence, FullIn(subject, to_full));
  return ev;
}

LeakReport LeakTracker::MakeReport(const Subject& subject, const Tracked& tracked) const {
  LeakReport r;
  r.subject = subject;
  r.estimate = tracked.detector.estimate();
  r.capacity_bytes = tracked.capacity_bytes;
  r.time_to_full = r.estimate.time_to_full;
  if (auto sps = steps_.steps_per_s()) r.bytes_per_step = r.estimate.rate_bytes_per_s / *sps;
  if (tracked.step_verdict) r.estimate.suspected = true;
  return r;
}

Event LeakTracker::MakeEvent(std::chrono::system_clock::time_point time, const Subject& subject,
                             LeakChange change, const Tracked& tracked) const {
  const LeakReport r = MakeReport(subject, tracked);
  const LeakEstimate& e = r.estimate;
  std::optional<std::chrono::seconds> to_full = e.time_to_full;
  if (!to_full && e.headroom_bytes) to_full = TimeToFull(*e.headroom_bytes, 0, e.rate_bytes_per_s);
  std::string rate = FormatRate(e.rate_bytes_per_s);
  if (r.bytes_per_step) rate += fmt::format(", {:.2f} MiB/step", *r.bytes_per_step / kMiB);
  Event ev;
  switch (change) {
    case LeakChange::kSuspected:
    case LeakChange::kUpdated:
      ev = BaseEvent(time, subject,
                     change == LeakChange::kSuspected ? Event::Kind::kLeakSuspected
                                                      : Event::Kind::kLeakUpdated);
      ev.severity = SeverityFor(to_full);
      ev.message =
          fmt::format("{}{} {} {} (floor {}, over {}, confidence {:.1f} %){}",
                      change == LeakChange::kUpdated ? "update: " : "", Who(subject), Verb(subject),
                      rate, FormatBytes(e.floor_bytes), FormatDuration(e.window).substr(1),
                      100 * e.confidence, FullIn(subject, to_full));
      break;
    case LeakChange::kCleared:
      ev = BaseEvent(time, subject, Event::Kind::kLeakCleared);
      ev.severity = Severity::kInfo;
      ev.message = fmt::format("{}: floor flat again at {} (no longer leaking)", Who(subject),
                               FormatBytes(e.floor_bytes));
      break;
    case LeakChange::kForecast:
    case LeakChange::kForecastUpdated:
      ev = BaseEvent(time, subject, Event::Kind::kOomForecast);
      ev.severity = SeverityFor(to_full);
      ev.message =
          fmt::format("{}{}: memory grows {}{} (for {}: too young for a leak verdict)",
                      change == LeakChange::kForecastUpdated ? "update: " : "", Who(subject), rate,
                      to_full ? fmt::format(": GPU {} full in {} at this rate", subject.gpu,
                                            FormatDuration(*to_full))
                              : "",
                      FormatDuration(e.window).substr(1));
      break;
    case LeakChange::kForecastCleared:
      ev = BaseEvent(time, subject, Event::Kind::kOomForecastCleared);
      ev.severity = Severity::kInfo;
      ev.message = fmt::format("{}: growth stopped at {}: out-of-memory forecast cleared",
                               Who(subject), FormatBytes(e.last_bytes));
      to_full.reset();
      break;
  }
  ev.value = e.rate_bytes_per_s;
  ev.time_to_full = to_full;
  return ev;
}

std::vector<LeakReport> LeakTracker::Reports() const {
  std::vector<LeakReport> out;
  out.reserve(detectors_.size());
  for (const auto& [subject, tracked] : detectors_) out.push_back(MakeReport(subject, tracked));
  return out;
}

std::optional<LeakReport> LeakTracker::Report(const Subject& subject) const {
  auto it = detectors_.find(subject);
  if (it == detectors_.end()) return std::nullopt;
  return MakeReport(subject, it->second);
}

}  // namespace gpuwatch::leaks
