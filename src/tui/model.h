// Everything `top` shows, as the sources leave it: per host its state, its
// history and its recent events; and what the source is (live, demo,
// replay, remote daemons, Prometheus). Sources write it under Feed's lock;
// the view reads it under the same lock.
#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "gpuwatch/event.h"
#include "tui/history.h"
#include "tui/host_view.h"

namespace gpuwatch::tui {

inline constexpr std::size_t kEventsKept = 200;

struct HostView {
  HostState state;
  History history;
  std::deque<Event> events;  // newest last, at most kEventsKept
  void AddEvent(const Event& e) {
    events.push_back(e);
    while (events.size() > kEventsKept) events.pop_front();
  }
};

enum class SourceKind { kLocal, kDemo, kReplay, kRemote, kPrometheus };

// Where a replay stands (pause, seek and speed are the replay's keys).
struct ReplayPosition {
  double speed = 1;
  bool paused = false;
  bool finished = false;
  std::chrono::system_clock::time_point first, at, last;  // recording times
};

struct TopModel {
  SourceKind kind = SourceKind::kLocal;
  std::string source_detail;  // the scenario, the recording, the Prometheus URL
  std::chrono::milliseconds interval{1000};
  std::vector<HostView> hosts;  // one for local, demo and replay
  std::optional<ReplayPosition> replay;
  std::uint64_t version = 0;  // bumped by every change: nothing new, nothing to draw
  // Signals can be sent: local processes only.
  bool local() const { return kind == SourceKind::kLocal || kind == SourceKind::kDemo; }
};

}  // namespace gpuwatch::tui
