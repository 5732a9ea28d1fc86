// Reads a SQLite history (store::HistoryWriter, docs/history.md) as a
// recording: the raw-tier samples of every GPU and process, the static facts
// the devices table keeps, events and marks. Read-only through
// store::HistoryReader, so it works while a writer is still writing the file;
// what was committed when the device list was read is what gets replayed.
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <limits>
#include <map>
#include <set>

#include "backends/replay/recording.h"
#include "backends/replay/recording_file.h"
#include "store/history_reader.h"
#include "store/schema.h"
#include "store/sqlite.h"

namespace gpuwatch::replay {
namespace {

using std::chrono::milliseconds;
using store::TimePoint;

constexpr std::string_view kNotKept = "not kept in the history database";
constexpr std::string_view kNullReading = "N/A when recorded (the history keeps no reason)";

// The sample columns this file has: the store's columns for the catalogue,
// less any a newer catalogue added after the file was last written.
struct Layout {
  std::vector<FieldId> device_fields;
  std::vector<FieldId> process_fields;
};

Result<std::set<std::string>> Names(store::Db& db, std::string_view sql) {
  Result<store::Stmt> q = db.Prepare(sql);
  if (!q) return q.error();
  std::set<std::string> out;
  for (;;) {
    Result<bool> row = q->Step();
    if (!row) return row.error();
    if (!*row) return out;
    out.insert(q->Text(0));
  }
}

// Checks the tables replay reads are there (HistoryReader::Open has already
// checked the file is a gpuwatch history of a version we read).
Result<Layout> ReadLayout(const std::string& path) {
  Result<store::Db> db = store::Db::Open(path, store::Db::Mode::kReadOnly);
  if (!db) return db.error();
  Result<std::set<std::string>> tables =
      Names(*db, "SELECT name FROM sqlite_schema WHERE type = 'table'");
  if (!tables) return tables.error().WithContext(fmt::format("history database '{}'", path));
  std::string missing;
  for (std::string_view t :
       {"devices", "processes", "events", "marks", "device_raw", "process_raw"}) {
    if (!tables->count(std::string(t)))
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", t);
  }
  if (!missing.empty()) {
    return Status::InvalidArgument(fmt::format(
        "history database '{}': not a gpuwatch history (missing tables: {})", path, missing));
  }
  Layout layout;
  for (auto [family, out] : {std::pair{store::kDeviceFamily, &layout.device_fields},
                             std::pair{store::kProcessFamily, &layout.process_fields}}) {
    Result<std::set<std::string>> columns =
        Names(*db, fmt::format("SELECT name FROM pragma_table_info('{}')",
                               store::TableName(family, store::Tier::kRaw)));
    if (!columns) return columns.error().WithContext(fmt::format("history database '{}'", path));
    for (FieldId id : store::StoredFields(family.scope)) {
      if (columns->count(std::string(Info(id).key))) out->push_back(id);
    }
  }
  return layout;
}

std::string Utc(TimePoint t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Every field of scope S marked "not kept", except those with a column.
template <Scope S>
FieldArray<S> Blank(const std::vector<FieldId>& stored) {
  FieldArray<S> out;
  const FieldRange r = RangeOf(S);
  for (std::size_t i = r.first; i < r.first + r.count; ++i) {
    const auto id = static_cast<FieldId>(i);
    if (std::find(stored.begin(), stored.end(), id) == stored.end()) {
      out[id] = Reading::Absent(Missing::kNotYetSampled, std::string(kNotKept));
    }
  }
  return out;
}

template <Scope S>
void Fill(const std::vector<FieldId>& fields, const store::SeriesPoint& point, FieldArray<S>& out) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::optional<double>& v = point.values[i].avg;
    out[fields[i]] = v ? Reading::Number(*v)
                       : Reading::Absent(Missing::kNotYetSampled, std::string(kNullReading));
  }
}

DeviceFields Facts(int index, const store::DeviceRecord* d) {
  DeviceFields f = Blank<Scope::kDevice>({});
  f[FieldId::kIndex] = Reading::Number(index);
  if (d == nullptr) return f;
  if (!d->name.empty()) f[FieldId::kName] = Reading::Text(d->name);
  if (!d->uuid.starts_with("index:")) f[FieldId::kUuid] = Reading::Text(d->uuid);
  if (d->memory_total_bytes)
    f[FieldId::kMemoryTotalBytes] = Reading::Number(*d->memory_total_bytes);
  return f;
}

// A process as the history keeps it: attribution from its processes row
// (one per process and GPU), the changing fields from its samples.
ProcessSample Attributed(const store::ProcessRecord& r, const ProcessFields& blank) {
  ProcessSample p;
  p.pid = r.key.pid;
  p.gpu_instance_id = r.gpu_instance_id;
  p.fields = blank;
  HostProcess& h = p.host;
  // The history keeps no visibility: a process never attributed was most
  // likely outside the recorder's PID namespace.
  h.visibility = !r.name.empty() || !r.command.empty() || !r.user.empty()
                     ? HostProcess::Visibility::kVisible
                     : HostProcess::Visibility::kOtherPidNs;
  h.name = r.name;
  h.command = r.command;
  h.user = r.user;
  h.start_ticks = r.key.start_ticks;
  h.start_time = r.start_time;
  h.container_id = r.container_id;
  h.container_runtime = r.container_runtime;
  h.pod_uid = r.pod_uid;
  h.slurm_job_id = r.slurm_job_id;
  return p;
}

// A mark as the event the JSON Lines writer records for it (cli/pipeline.cc).
Event MarkEvent(const store::Mark& m) {
  Event e;
  e.time = m.time;
  e.kind = Event::Kind::kMark;
  e.source = std::string(store::MarkKindName(m.kind));
  e.process = m.process;
  e.value = m.value;
  e.message = e.source;
  if (m.value) e.message += fmt::format(" {}", *m.value);
  if (!m.label.empty()) e.message += " " + m.label;
  return e;
}

// The whole GPUs of the devices table, by index. MIG devices are left out,
// as --jsonl recordings leave them out; their processes are stored on the
// parent GPU. Points into the records it was built from.
struct Gpus {
  std::map<std::int64_t, int> index_of;                // device id -> index
  std::map<int, const store::DeviceRecord*> identity;  // index -> the one seen last
  std::map<int, std::vector<std::string>> uuids;       // index -> every identity
  std::set<std::int64_t> mig_ids;
  TimePoint first_seen = TimePoint::max();
  TimePoint last_seen = TimePoint::min();
};

Gpus WholeGpus(const std::vector<store::DeviceRecord>& devices) {
  Gpus g;
  for (const store::DeviceRecord& d : devices) {
    if (d.mig_index) {
      g.mig_ids.insert(d.id);
      continue;
    }
    g.index_of[d.id] = d.index;
    const store::DeviceRecord*& seen = g.identity[d.index];
    if (seen == nullptr || d.last_seen >= seen->last_seen) seen = &d;
    g.uuids[d.index].push_back(d.uuid);
    g.first_seen = std::min(g.first_seen, d.first_seen);
    g.last_seen = std::max(g.last_seen, d.last_seen);
  }
  return g;
}

using Timeline = std::map<TimePoint, std::map<int, DeviceSample>>;  // time -> index -> GPU

Status AddGpuSamples(store::HistoryReader& reader, const Layout& layout, const Gpus& gpus,
                     TimePoint to, Timeline& at, std::set<int>& sampled) {
  const DeviceFields blank = Blank<Scope::kDevice>(layout.device_fields);
  for (const auto& [id, index] : gpus.index_of) {
    Result<store::Series> series = reader.DeviceSamples(id, layout.device_fields, TimePoint::min(),
                                                        to, milliseconds(0), store::Tier::kRaw);
    if (!series) return series.error();
    if (!series->points.empty()) sampled.insert(index);
    for (const store::SeriesPoint& point : series->points) {
      auto [it, fresh] = at[point.time].try_emplace(index);
      if (!fresh) continue;  // two identities of one GPU at one time: the first
      it->second.index = index;
      it->second.fields = blank;
      Fill(layout.device_fields, point, it->second.fields);
    }
  }
  return Status::Ok();
}

// Adds every process sample to its GPU's sample; counts the processes
// recorded on a MIG device (not replayed).
Status AddProcessSamples(store::HistoryReader& reader, const Layout& layout, const Gpus& gpus,
                         TimePoint to, Timeline& at, std::size_t& on_mig) {
  Result<std::vector<store::ProcessRecord>> processes = reader.Processes(TimePoint::min(), to);
  if (!processes) return processes.error();
  const ProcessFields blank = Blank<Scope::kProcess>(layout.process_fields);
  for (const store::ProcessRecord& pr : *processes) {
    const auto device = gpus.index_of.find(pr.device_id);
    if (device == gpus.index_of.end()) {
      on_mig += gpus.mig_ids.count(pr.device_id);
      continue;
    }
    Result<store::Series> series = reader.ProcessSamples(
        pr.id, layout.process_fields, TimePoint::min(), to, milliseconds(0), store::Tier::kRaw);
    if (!series) return series.error();
    const ProcessSample base = Attributed(pr, blank);
    for (const store::SeriesPoint& point : series->points) {
      const auto sample = at.find(point.time);
      if (sample == at.end()) continue;
      const auto d = sample->second.find(device->second);
      if (d == sample->second.end()) continue;
      ProcessSample p = base;
      Fill(layout.process_fields, point, p.fields);
      d->second.processes.push_back(std::move(p));
    }
  }
  return Status::Ok();
}

Result<std::vector<Event>> EventsAndMarks(store::HistoryReader& reader) {
  Result<std::vector<Event>> events = reader.Events(TimePoint::min(), TimePoint::max());
  if (!events) return events.error();
  Result<std::vector<store::Mark>> marks = reader.Marks(TimePoint::min(), TimePoint::max());
  if (!marks) return marks.error();
  for (const store::Mark& m : *marks) events->push_back(MarkEvent(m));
  std::stable_sort(events->begin(), events->end(),
                   [](const Event& a, const Event& b) { return a.time < b.time; });
  return events;
}

// What the history holds that is not replayed, or only in part.
std::vector<std::string> Notes(const Gpus& gpus, const std::set<int>& sampled, TimePoint first_raw,
                               std::size_t on_mig) {
  std::vector<std::string> notes;
  if (first_raw > gpus.first_seen) {
    notes.push_back(fmt::format(
        "raw samples start at {}, the history at {}: retention has removed the older raw samples "
        "(only per-minute and per-hour summaries of them remain), so replay starts at {}",
        Utc(first_raw), Utc(gpus.first_seen), Utc(first_raw)));
  }
  for (const auto& [index, record] : gpus.identity) {
    if (!sampled.count(index)) {
      notes.push_back(
          fmt::format("GPU {} ({}) has no raw samples left: replayed with its facts and no values",
                      index, record->uuid));
    }
  }
  for (int i = 0; i < gpus.identity.rbegin()->first; ++i) {
    if (!gpus.identity.count(i)) {
      notes.push_back(fmt::format("GPU {} is not in the history: replayed without values", i));
    }
  }
  for (const auto& [index, ids] : gpus.uuids) {
    if (ids.size() < 2) continue;
    std::string list;
    for (const auto& u : ids) list += (list.empty() ? "" : ", ") + u;
    notes.push_back(fmt::format("GPU {} was recorded under {} identities ({}): replayed as one GPU",
                                index, ids.size(), list));
  }
  if (!gpus.mig_ids.empty()) {
    std::string note = fmt::format(
        "{} MIG device(s) in the history are not replayed (as with --jsonl recordings); processes "
        "are replayed on their parent GPU",
        gpus.mig_ids.size());
    if (on_mig > 0) note += fmt::format(", except {} recorded on a MIG device itself", on_mig);
    notes.push_back(std::move(note));
  }
  return notes;
}

}  // namespace

Result<Recording> ReadHistoryRecording(const std::string& path) {
  // SQLite opens what it is given: a FIFO would block it, a device feed it.
  if (Status s = CheckRecordingFile(path); !s.ok()) return s;
  Result<store::HistoryReader> opened = store::HistoryReader::Open(path);
  if (!opened) return opened.error();
  Result<Layout> layout = ReadLayout(path);
  if (!layout) return layout.error();
  store::HistoryReader& reader = *opened;
  const std::string where = fmt::format("history database '{}'", path);

  Result<std::vector<store::DeviceRecord>> devices = reader.Devices();
  if (!devices) return devices.error().WithContext(where);
  const Gpus gpus = WholeGpus(*devices);
  if (gpus.identity.empty()) {
    return Status::InvalidArgument(fmt::format("{}: no samples (the history holds no GPUs)", path));
  }
  // Samples and processes up to what the device list says was written, so a
  // batch committed while reading does not show up half.
  const TimePoint to = gpus.last_seen + milliseconds(1);
  Timeline at;
  std::set<int> sampled;  // indices with raw samples
  if (Status s = AddGpuSamples(reader, *layout, gpus, to, at, sampled); !s.ok()) {
    return s.WithContext(where);
  }
  if (at.empty()) {
    return Status::InvalidArgument(fmt::format(
        "{}: no samples: the history lists {} GPU(s) but holds no raw samples of them (raw "
        "samples are kept for a day by default; the per-minute and per-hour summaries are not "
        "replayed)",
        path, gpus.identity.size()));
  }
  std::size_t on_mig = 0;
  if (Status s = AddProcessSamples(reader, *layout, gpus, to, at, on_mig); !s.ok()) {
    return s.WithContext(where);
  }
  Result<std::vector<Event>> events = EventsAndMarks(reader);
  if (!events) return events.error().WithContext(where);

  Result<bool> demo = reader.Demo();
  if (!demo) return demo.error().WithContext(where);

  Recording r;
  r.format = RecordingFormat::kHistory;
  r.info.library_path = path;
  r.info.demo = *demo;
  r.events = std::move(*events);
  r.notes = Notes(gpus, sampled, at.begin()->first, on_mig);
  for (auto& [time, by_index] : at) {
    RecordedSample s;
    s.time = time;
    for (auto& [index, d] : by_index) s.devices.push_back(std::move(d));
    r.samples.push_back(std::move(s));
  }
  const int count = gpus.identity.rbegin()->first + 1;
  for (int i = 0; i < count; ++i) {
    const auto it = gpus.identity.find(i);
    r.facts.push_back(Facts(i, it == gpus.identity.end() ? nullptr : it->second));
  }
  r.host = Blank<Scope::kHost>({});
  r.host[FieldId::kDeviceCount] = Reading::Number(count);
  return r;
}

}  // namespace gpuwatch::replay
