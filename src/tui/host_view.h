// What `gpuwatch top` shows of one machine: its newest snapshot and what the
// analysis says about it, whoever produced them (the local sampler and
// pipeline, a remote `gpuwatch serve`, or Prometheus). Every source fills
// this; the view model (view.h) reads only this.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/diagnoses/diagnoses.h"
#include "analysis/job/framework_table.h"
#include "analysis/leaks/leak_tracker.h"
#include "analysis/rules/engine.h"
#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"
#include "host/leases.h"

namespace gpuwatch::tui {

struct HostState {
  std::string label;     // what the user named it: "local", "host1:9835", a Prometheus instance
  std::string hostname;  // as the machine reports it ("" when unknown)
  std::shared_ptr<const Snapshot> snapshot;  // null until the first answer
  std::vector<rules::ActiveAlert> alerts;
  std::vector<leaks::LeakReport> leaks;
  std::vector<ProcessFrameworkMemory> framework;
  std::vector<Preallocation> preallocated;
  std::optional<host::LeaseTable> leases;  // none: not known to this source
  // Set while the host does not answer: why ("connection refused",
  // "401 Unauthorized: check --remote-user", "not a gpuwatch API: ...").
  // The last snapshot, if any, is kept beside it (shown as stale).
  std::string down;
  std::chrono::system_clock::time_point updated{};  // when this was last refreshed
};

}  // namespace gpuwatch::tui
