#include "sampler/lifecycle.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <utility>

namespace gpuwatch {
namespace {

using Key = std::pair<int, ProcessKey>;  // (gpu, process)

std::map<Key, const ProcessSample*> Processes(const Snapshot& s) {
  std::map<Key, const ProcessSample*> out;
  for (const auto& d : s.devices) {
    for (const auto& p : d.processes) out[{d.index, ProcessKey{p.pid, p.host.start_ticks}}] = &p;
  }
  return out;
}

std::string Describe(const ProcessSample& p) {
  if (p.host.visibility != HostProcess::Visibility::kVisible) return fmt::format("pid {}", p.pid);
  const std::string& what = p.host.command.empty() ? p.host.name : p.host.command;
  return fmt::format("pid {} ({}{}{})", p.pid, p.host.user, p.host.user.empty() ? "" : ": ",
                     what.substr(0, 60));
}

}  // namespace

std::vector<Event> LifecycleEvents(const Snapshot* previous, const Snapshot& current) {
  std::vector<Event> out;
  if (current.stale) return out;  // nothing was read: nothing changed
  auto event = [&](Event::Kind kind, Severity severity, int gpu, std::string message) {
    Event e;
    e.time = current.time;
    e.kind = kind;
    e.severity = severity;
    e.source = "sampler";
    e.gpu = gpu;
    e.message = std::move(message);
    out.push_back(std::move(e));
  };
  for (const auto& d : current.devices) {
    const DeviceSample* before = nullptr;
    if (previous != nullptr) {
      for (const auto& b : previous->devices) {
        if (b.index == d.index) before = &b;
      }
    }
    const bool lost = d.health == DeviceHealth::kLost;
    const bool was_lost = before != nullptr && before->health == DeviceHealth::kLost;
    if (lost && !was_lost) {
      event(Event::Kind::kDeviceLost, Severity::kCritical, d.index,
            fmt::format("GPU {} lost: {}", d.index, d.health_detail));
    } else if (!lost && was_lost) {
      event(Event::Kind::kDeviceBack, Severity::kInfo, d.index,
            fmt::format("GPU {} is back", d.index));
    }
  }
  if (previous == nullptr) return out;  // processes already running are not "started"
  const auto before = Processes(*previous);
  const auto now = Processes(current);
  std::set<int> lost_gpus;
  for (const auto& d : current.devices) {
    if (d.health != DeviceHealth::kOk) lost_gpus.insert(d.index);
  }
  for (const auto& [key, p] : now) {
    if (before.count(key) == 0) {
      event(Event::Kind::kProcessStarted, Severity::kInfo, key.first,
            fmt::format("{} started on GPU {}", Describe(*p), key.first));
      out.back().process = key.second;
    }
  }
  for (const auto& [key, p] : before) {
    if (now.count(key) == 0 && lost_gpus.count(key.first) == 0) {
      event(Event::Kind::kProcessEnded, Severity::kInfo, key.first,
            fmt::format("{} ended on GPU {}", Describe(*p), key.first));
      out.back().process = key.second;
    }
  }
  return out;
}

}  // namespace gpuwatch
