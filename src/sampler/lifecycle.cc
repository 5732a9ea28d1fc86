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
  // A GPU is lost, stale (a driver call on it hangs: the watchdog's copy of
  // the last snapshot, or one GPU of several still in a call), or answering.
  for (const auto& d : current.devices) {
    const DeviceSample* before = nullptr;
    if (previous != nullptr) {
      for (const auto& b : previous->devices) {
        if (b.index == d.index) before = &b;
      }
    }
    const DeviceHealth was = before != nullptr ? before->health : DeviceHealth::kOk;
    if (d.health == was) continue;
    if (d.health == DeviceHealth::kLost) {
      event(Event::Kind::kDeviceLost, Severity::kCritical, d.index,
            fmt::format("GPU {} lost: {}", d.index, d.health_detail));
    } else if (d.health == DeviceHealth::kStale) {
      event(Event::Kind::kDeviceStale, Severity::kWarning, d.index,
            fmt::format("GPU {} is not answering ({}): its values are the last ones read, "
                        "marked stale",
                        d.index, d.health_detail.substr(0, d.health_detail.find(';'))));
    } else if (d.health == DeviceHealth::kOk &&
               (was == DeviceHealth::kLost || was == DeviceHealth::kStale)) {
      event(Event::Kind::kDeviceBack, Severity::kInfo, d.index,
            was == DeviceHealth::kLost ? fmt::format("GPU {} is back", d.index)
                                       : fmt::format("GPU {} answers again", d.index));
    }
  }
  if (current.stale) return out;        // nothing was read: no process started or ended
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
