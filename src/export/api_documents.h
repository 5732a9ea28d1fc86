// The JSON API's documents (/api/v1/..., docs/API.md), built from the state
// the daemon publishes. Pure functions; the HTTP side only routes.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/diagnoses/diagnoses.h"
#include "analysis/job/framework_table.h"
#include "analysis/leaks/leak_tracker.h"
#include "analysis/rules/engine.h"
#include "core/field_history.h"
#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"
#include "host/leases.h"

namespace gpuwatch {

inline constexpr std::string_view kApiSchema = "gpuwatch.api/1";

// What the daemon publishes after each snapshot: immutable once published.
struct Published {
  std::shared_ptr<const Snapshot> snapshot;
  std::vector<rules::ActiveAlert> alerts;
  std::vector<leaks::LeakReport> leaks;
  std::vector<ProcessFrameworkMemory> framework;
  std::vector<Preallocation> preallocated;   // processes diagnosed with pre-allocation
  std::vector<StandingDiagnosis> diagnoses;  // GPUs starved or throttled now
  // Failed NVML calls by call, counted up to this snapshot (Hub::CountErrors).
  std::map<std::string, std::uint64_t> nvml_errors;
  std::uint64_t version = 0;  // 1, 2, ... per publication
};

struct ApiContext {
  std::string hostname;
  double interval_seconds = 1;
};

// The machine's lease file (docs/select.md) as one request read it: the
// table, or why it could not be read.
using LeaseRead = Result<host::LeaseTable>;

double UnixSeconds(std::chrono::system_clock::time_point t);

// With `leases` (nullptr: the server reads none, and the documents have no
// lease keys): "lease" on every device and MIG device, null when free;
// "lease_queue"; "lease_error", null or why the file could not be read.
nlohmann::json SnapshotDocument(const Published& p, const ApiContext& c,
                                const LeaseRead* leases = nullptr);
// With `leases`: "lease" on every GPU, null when free.
nlohmann::json DevicesDocument(const Published& p, const LeaseRead* leases = nullptr);
// /api/v1/leases: every lease of the machine and the wait queue.
nlohmann::json LeasesDocument(const host::LeaseTable& table);
nlohmann::json ProcessesDocument(const Published& p);
nlohmann::json EventDocument(const Event& e);
nlohmann::json EventsDocument(const std::vector<Event>& events);

// History from the daemon's memory (when there is no --db): the same
// document as the SQLite-backed one, at the raw tier; `window` is
// FieldHistory::Read's answer for `device` and `fields`.
nlohmann::json RingHistoryDocument(const FieldHistory::Window& window, int device,
                                   const std::vector<FieldId>& fields);

}  // namespace gpuwatch
