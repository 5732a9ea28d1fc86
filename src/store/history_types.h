// Values the history store takes and gives back: options, marks, and the
// records and series the reader returns. Times are system_clock (stamps);
// the database keeps them as integer milliseconds since the Unix epoch.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuwatch/event.h"
#include "gpuwatch/fields.h"
#include "gpuwatch/status.h"

namespace gpuwatch::store {

using Clock = std::chrono::system_clock;
using TimePoint = Clock::time_point;

// A mark from a training process (through GPUWATCH_SOCKET): a step or epoch
// number, or a phase name ("train", "eval").
struct Mark {
  enum class Kind : std::uint8_t { kStep, kEpoch, kPhase };
  TimePoint time;
  Kind kind = Kind::kStep;
  std::optional<double> value;  // step / epoch number
  std::string label;            // phase name; free text for the others
  std::optional<ProcessKey> process;
  friend bool operator==(const Mark&, const Mark&) = default;
};
std::string_view MarkKindName(Mark::Kind k);  // "step", "epoch", "phase"

// The resolutions samples are kept at.
enum class Tier : std::uint8_t { kRaw, kMinute, kHour };
std::string_view TierName(Tier t);  // "raw", "minute", "hour"

struct Retention {
  std::chrono::seconds raw = std::chrono::hours(24);
  std::chrono::seconds minute = std::chrono::hours(24 * 30);
  std::chrono::seconds hour = std::chrono::hours(24 * 365);  // also events, marks, processes
};

struct HistoryOptions {
  Retention retention;
  // How often the writer commits a batch: the most a crash (kill -9) loses.
  std::chrono::milliseconds batch_interval{1000};
  // Snapshots waiting for the writer; beyond this the oldest is dropped
  // (and counted) so the sampler never blocks.
  std::size_t queue_capacity = 600;
  std::size_t event_queue_capacity = 10000;  // events and marks together
  // Caps the database file (PRAGMA max_page_count); 0 = no cap. Reaching it
  // behaves like a full disk.
  std::uint64_t max_database_bytes = 0;
};

// The writer's counters, for `doctor`, /metrics and tests.
struct WriterStats {
  std::uint64_t snapshots_appended = 0;
  std::uint64_t snapshots_written = 0;
  std::uint64_t snapshots_dropped = 0;  // queue full: the oldest went
  std::uint64_t snapshots_lost = 0;     // in a batch that could not be written
  std::uint64_t snapshots_stale = 0;    // re-published by the watchdog: not stored again
  std::uint64_t events_written = 0;     // events and marks
  std::uint64_t events_dropped = 0;
  std::uint64_t events_lost = 0;
  std::uint64_t batches = 0;
  std::uint64_t failed_batches = 0;
  std::uint64_t warnings = 0;  // one per episode of failed writes
  bool failing = false;        // the last batch could not be written
};

struct DeviceRecord {
  std::int64_t id = 0;  // the store's own id, stable within one database
  std::string uuid;     // "index:N" (or "index:N/mig:M") when the uuid was not read
  int index = 0;
  std::optional<int> mig_index;
  std::string name;
  std::optional<double> memory_total_bytes;
  TimePoint first_seen;
  TimePoint last_seen;
};

struct ProcessRecord {
  std::int64_t id = 0;
  std::int64_t device_id = 0;
  ProcessKey key;
  std::optional<TimePoint> start_time;
  std::string name;
  std::string command;
  std::string user;
  std::string container_id;
  std::string container_runtime;
  std::string pod_uid;
  std::string slurm_job_id;
  std::optional<std::uint32_t> gpu_instance_id;
  TimePoint first_seen;
  TimePoint last_seen;
};

// One field at one point: at the raw tier (step 0) avg = min = max = the
// sample; otherwise the aggregate over the bucket. Absent: no reading.
struct Aggregate {
  std::optional<double> avg;
  std::optional<double> min;
  std::optional<double> max;
  friend bool operator==(const Aggregate&, const Aggregate&) = default;
};

struct SeriesPoint {
  TimePoint time;                 // start of the bucket (raw: the sample time)
  std::vector<Aggregate> values;  // in the order of Series::fields
};

struct Series {
  Tier tier = Tier::kRaw;
  std::vector<FieldId> fields;
  std::vector<SeriesPoint> points;
};

}  // namespace gpuwatch::store
