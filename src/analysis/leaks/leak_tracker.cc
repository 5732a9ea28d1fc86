#include "analysis/leaks/leak_tracker.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "analysis/leaks/forecast.h"

namespace gpuwatch::leaks {
namespace {

// A suspected leak whose device fills within this is critical.
constexpr std::chrono::minutes kCriticalTimeToFull{30};

std::string Who(const Subject& s) {
  if (s.process) return fmt::format("pid {} on GPU {}", s.process->pid, s.gpu);
  return fmt::format("GPU {} memory", s.gpu);
}

}  // namespace

LeakTracker::LeakTracker(const LeakOptions& options) : options_(options) {}

void LeakTracker::ObserveStep(std::chrono::system_clock::time_point time, std::uint64_t step) {
  steps_.Observe(time, step);
}

std::vector<Event> LeakTracker::Observe(const Snapshot& snapshot) {
  std::vector<std::pair<Subject, LeakChange>> changes;
  std::set<int> healthy;
  std::set<Subject> seen;
  auto feed = [&](const Subject& subject, const Reading& used, std::optional<double> capacity) {
    if (!used.is_number()) return;
    seen.insert(subject);
    auto it = detectors_.try_emplace(subject, Tracked{LeakDetector(options_), std::nullopt}).first;
    if (capacity) it->second.capacity_bytes = capacity;
    const LeakChange c = it->second.detector.Observe(snapshot.time, used.number());
    if (c != LeakChange::kNone) changes.emplace_back(subject, c);
  };
  for (const DeviceSample& d : snapshot.devices) {
    if (d.health != DeviceHealth::kOk) continue;
    healthy.insert(d.index);
    const Reading& total = d.fields[FieldId::kMemoryTotalBytes];
    feed(Subject{d.index, std::nullopt}, d.fields[FieldId::kMemoryUsedBytes],
         total.is_number() ? std::optional<double>(total.number()) : std::nullopt);
  }
  for (const DeviceSample& d : snapshot.devices) {
    if (d.health != DeviceHealth::kOk) continue;
    for (const ProcessSample& p : d.processes) {
      feed(Subject{d.index, ProcessKey{p.pid, p.host.start_ticks}},
           p.fields[FieldId::kProcessUsedMemoryBytes], std::nullopt);
    }
  }

  std::vector<Event> events;
  for (const auto& [subject, change] : changes) {
    events.push_back(MakeEvent(snapshot.time, subject, change, detectors_.at(subject)));
  }
  // Processes gone from a healthy device have ended: forget them.
  for (auto it = detectors_.begin(); it != detectors_.end();) {
    const Subject& s = it->first;
    if (!s.process || !healthy.contains(s.gpu) || seen.contains(s)) {
      ++it;
      continue;
    }
    const LeakEstimate& e = it->second.detector.estimate();
    if (e.suspected) {
      Event ev;
      ev.time = snapshot.time;
      ev.kind = Event::Kind::kLeakCleared;
      ev.severity = Severity::kInfo;
      ev.source = "leak";
      ev.gpu = s.gpu;
      ev.process = s.process;
      ev.value = e.rate_bytes_per_s;
      ev.message = fmt::format("{} ended while suspected of leaking {}", Who(s),
                               FormatRate(e.rate_bytes_per_s));
      events.push_back(std::move(ev));
    }
    it = detectors_.erase(it);
  }
  return events;
}

LeakReport LeakTracker::MakeReport(const Subject& subject, const Tracked& tracked) const {
  LeakReport r;
  r.subject = subject;
  r.estimate = tracked.detector.estimate();
  auto device = detectors_.find(Subject{subject.gpu, std::nullopt});
  if (device != detectors_.end()) {
    r.capacity_bytes = device->second.capacity_bytes;
    const LeakEstimate& d = device->second.detector.estimate();
    if (r.capacity_bytes && d.growing) {
      // OOM strikes at the peaks of the sawtooth, not at the floor.
      r.time_to_full =
          TimeToFull(*r.capacity_bytes, std::max(d.peak_bytes, d.last_bytes), d.rate_bytes_per_s);
    }
  }
  if (auto sps = steps_.steps_per_s()) r.bytes_per_step = r.estimate.rate_bytes_per_s / *sps;
  return r;
}

Event LeakTracker::MakeEvent(std::chrono::system_clock::time_point time, const Subject& subject,
                             LeakChange change, const Tracked& tracked) const {
  const LeakReport r = MakeReport(subject, tracked);
  const LeakEstimate& e = r.estimate;
  Event ev;
  ev.time = time;
  ev.source = "leak";
  ev.gpu = subject.gpu;
  ev.process = subject.process;
  ev.value = e.rate_bytes_per_s;
  if (change == LeakChange::kCleared) {
    ev.kind = Event::Kind::kLeakCleared;
    ev.severity = Severity::kInfo;
    ev.message = fmt::format("{}: floor flat again at {} (no longer leaking)", Who(subject),
                             FormatBytes(e.floor_bytes));
    return ev;
  }
  ev.kind = Event::Kind::kLeakSuspected;
  ev.severity = r.time_to_full && *r.time_to_full < kCriticalTimeToFull ? Severity::kCritical
                                                                        : Severity::kWarning;
  std::string rate = FormatRate(e.rate_bytes_per_s);
  if (r.bytes_per_step) rate += fmt::format(", {:.2f} MiB/step", *r.bytes_per_step / kMiB);
  ev.message = fmt::format("{} {} {} (floor {}, confidence {:.1f} %)", Who(subject),
                           subject.process ? "leaks" : "grows", rate, FormatBytes(e.floor_bytes),
                           100 * e.confidence);
  if (r.time_to_full) {
    ev.message += fmt::format("; GPU {} full in {} at this rate", subject.gpu,
                              FormatDuration(*r.time_to_full));
  }
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
