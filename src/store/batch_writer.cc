#include "store/batch_writer.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <utility>

#include "store/schema.h"

namespace gpuwatch::store {
namespace {

std::string InsertSamplesSql(const Family& f, const std::vector<FieldId>& fields) {
  std::string cols = fmt::format("ts, {}", f.owner);
  std::string params = "?1, ?2";
  int i = 3;
  for (FieldId id : fields) {
    cols += fmt::format(", \"{}\"", Info(id).key);
    params += fmt::format(", ?{}", i++);
  }
  return fmt::format("INSERT OR REPLACE INTO \"{}\"({}) VALUES({})", TableName(f, Tier::kRaw), cols,
                     params);
}

std::string DeviceKey(const DeviceSample& d) {
  const Reading& uuid = d.fields[FieldId::kUuid];
  if (uuid.is_text() && !uuid.text().empty()) return uuid.text();
  if (d.mig_index) return fmt::format("index:{}/mig:{}", d.index, *d.mig_index);
  return fmt::format("index:{}", d.index);
}

template <Scope S>
void BindFields(Stmt& stmt, const FieldArray<S>& values, const std::vector<FieldId>& fields) {
  int i = 3;
  for (FieldId id : fields) {
    const Reading& r = values[id];
    if (r.is_number()) {
      stmt.Bind(i, r.number());
    } else {
      stmt.BindNull(i);  // N/A is absent, never 0
    }
    ++i;
  }
}

// Runs an upsert ... RETURNING id.
Result<std::int64_t> ReturningId(Stmt& stmt) {
  Result<bool> row = stmt.Step();
  if (!row) {
    stmt.Reset();
    return row.error();
  }
  std::int64_t id = *row ? stmt.Int(0) : 0;
  while (*row) {
    row = stmt.Step();
    if (!row) break;
  }
  stmt.Reset();
  if (!row) return row.error();
  return id;
}

// Ids of the devices and processes one batch touched, and when each was
// last seen in it (written once at the end of the batch).
struct Seen {
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> devices;  // key -> id, ts
  std::map<std::tuple<std::int64_t, std::uint32_t, std::uint64_t>,
           std::pair<std::int64_t, std::int64_t>>
      processes;  // (device id, pid, start ticks) -> id, ts
};

}  // namespace

std::int64_t ToMillis(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

TimePoint FromMillis(std::int64_t ms) {
  return TimePoint(std::chrono::duration_cast<Clock::duration>(std::chrono::milliseconds(ms)));
}

Result<BatchWriter> BatchWriter::Create(Db& db) {
  BatchWriter w(db);
  w.device_fields_ = StoredFields(Scope::kDevice);
  w.process_fields_ = StoredFields(Scope::kProcess);
  struct Want {
    Stmt* stmt;
    std::string sql;
  };
  const Want wants[] = {
      {&w.upsert_device_,
       "INSERT INTO devices(uuid, idx, mig_index, name, memory_total_bytes, first_seen, "
       "last_seen) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?6) ON CONFLICT(uuid) DO UPDATE SET "
       "idx = excluded.idx, mig_index = excluded.mig_index, "
       "name = coalesce(excluded.name, devices.name), "
       "memory_total_bytes = coalesce(excluded.memory_total_bytes, devices.memory_total_bytes), "
       "first_seen = min(devices.first_seen, excluded.first_seen), "
       "last_seen = max(devices.last_seen, excluded.last_seen) RETURNING id"},
      {&w.upsert_process_,
       "INSERT INTO processes(device_id, pid, start_ticks, start_time, name, command, user, "
       "container_id, container_runtime, pod_uid, slurm_job_id, gpu_instance_id, first_seen, "
       "last_seen) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13) "
       "ON CONFLICT(device_id, pid, start_ticks) DO UPDATE SET "
       "start_time = coalesce(processes.start_time, excluded.start_time), "
       "name = iif(processes.name = '', excluded.name, processes.name), "
       "command = iif(processes.command = '', excluded.command, processes.command), "
       "user = iif(processes.user = '', excluded.user, processes.user), "
       "container_id = iif(processes.container_id = '', excluded.container_id, "
       "processes.container_id), "
       "container_runtime = iif(processes.container_runtime = '', excluded.container_runtime, "
       "processes.container_runtime), "
       "pod_uid = iif(processes.pod_uid = '', excluded.pod_uid, processes.pod_uid), "
       "slurm_job_id = iif(processes.slurm_job_id = '', excluded.slurm_job_id, "
       "processes.slurm_job_id), "
       "first_seen = min(processes.first_seen, excluded.first_seen), "
       "last_seen = max(processes.last_seen, excluded.last_seen) RETURNING id"},
      {&w.insert_device_raw_, InsertSamplesSql(kDeviceFamily, w.device_fields_)},
      {&w.insert_process_raw_, InsertSamplesSql(kProcessFamily, w.process_fields_)},
      {&w.touch_device_, "UPDATE devices SET last_seen = max(last_seen, ?2) WHERE id = ?1"},
      {&w.touch_process_, "UPDATE processes SET last_seen = max(last_seen, ?2) WHERE id = ?1"},
      {&w.insert_event_,
       "INSERT INTO events(ts, kind, severity, source, gpu, pid, start_ticks, value, message) "
       "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"},
      {&w.insert_mark_,
       "INSERT INTO marks(ts, kind, value, label, pid, start_ticks) "
       "VALUES(?1, ?2, ?3, ?4, ?5, ?6)"},
  };
  for (const Want& want : wants) {
    Result<Stmt> s = db.Prepare(want.sql);
    if (!s) return s.error();
    *want.stmt = std::move(*s);
  }
  return w;
}

Status BatchWriter::Write(const Batch& batch) {
  Transaction tx(*db_);
  if (Status s = tx.Begin(); !s.ok()) return s;
  // Simulated samples mark the whole file, so whatever reads it says DEMO
  // (one upsert per batch, inside its transaction).
  for (const auto& snap : batch.snapshots) {
    if (!snap->demo) continue;
    if (Status s = SetMeta(*db_, kDemoMetaKey, 1); !s.ok()) return s;
    break;
  }
  Seen seen;
  for (const auto& snap : batch.snapshots) {
    const std::int64_t ts = ToMillis(snap->time);
    for (const auto* list : {&snap->devices, &snap->mig_devices}) {
      for (const DeviceSample& d : *list) {
        if (d.health == DeviceHealth::kStale) continue;  // the last values again: a gap
        std::string key = DeviceKey(d);
        std::int64_t device_id = 0;
        if (auto it = seen.devices.find(key); it != seen.devices.end()) {
          device_id = it->second.first;
          it->second.second = std::max(it->second.second, ts);
        } else {
          Result<std::int64_t> id = DeviceId(d, ts);
          if (!id) return id.error();
          device_id = *id;
          seen.devices.emplace(std::move(key), std::pair{device_id, ts});
        }
        insert_device_raw_.Bind(1, ts);
        insert_device_raw_.Bind(2, device_id);
        BindFields(insert_device_raw_, d.fields, device_fields_);
        if (Status s = insert_device_raw_.Run(); !s.ok()) return s;

        for (const ProcessSample& p : d.processes) {
          auto pkey = std::tuple{device_id, p.pid, p.host.start_ticks};
          std::int64_t process_id = 0;
          if (auto it = seen.processes.find(pkey); it != seen.processes.end()) {
            process_id = it->second.first;
            it->second.second = std::max(it->second.second, ts);
          } else {
            Result<std::int64_t> id = ProcessId(device_id, p, ts);
            if (!id) return id.error();
            process_id = *id;
            seen.processes.emplace(pkey, std::pair{process_id, ts});
          }
          insert_process_raw_.Bind(1, ts);
          insert_process_raw_.Bind(2, process_id);
          BindFields(insert_process_raw_, p.fields, process_fields_);
          if (Status s = insert_process_raw_.Run(); !s.ok()) return s;
        }
      }
    }
  }
  for (const auto& [key, v] : seen.devices) {
    touch_device_.Bind(1, v.first);
    touch_device_.Bind(2, v.second);
    if (Status s = touch_device_.Run(); !s.ok()) return s;
  }
  for (const auto& [key, v] : seen.processes) {
    touch_process_.Bind(1, v.first);
    touch_process_.Bind(2, v.second);
    if (Status s = touch_process_.Run(); !s.ok()) return s;
  }
  for (const Event& e : batch.events) {
    if (Status s = WriteEvent(e); !s.ok()) return s;
  }
  for (const Mark& m : batch.marks) {
    if (Status s = WriteMark(m); !s.ok()) return s;
  }
  return tx.Commit();
}

Result<std::int64_t> BatchWriter::DeviceId(const DeviceSample& d, std::int64_t ts) {
  Stmt& s = upsert_device_;
  s.Bind(1, DeviceKey(d));
  s.Bind(2, static_cast<std::int64_t>(d.index));
  if (d.mig_index) {
    s.Bind(3, static_cast<std::int64_t>(*d.mig_index));
  } else {
    s.BindNull(3);
  }
  const Reading& name = d.fields[FieldId::kName];
  if (name.is_text()) {
    s.Bind(4, name.text());
  } else {
    s.BindNull(4);
  }
  const Reading& total = d.fields[FieldId::kMemoryTotalBytes];
  if (total.is_number()) {
    s.Bind(5, total.number());
  } else {
    s.BindNull(5);
  }
  s.Bind(6, ts);
  return ReturningId(s);
}

Result<std::int64_t> BatchWriter::ProcessId(std::int64_t device_id, const ProcessSample& p,
                                            std::int64_t ts) {
  Stmt& s = upsert_process_;
  const HostProcess& h = p.host;
  s.Bind(1, device_id);
  s.Bind(2, static_cast<std::int64_t>(p.pid));
  s.Bind(3, static_cast<std::int64_t>(h.start_ticks));
  if (h.start_time) {
    s.Bind(4, ToMillis(*h.start_time));
  } else {
    s.BindNull(4);
  }
  s.Bind(5, h.name);
  s.Bind(6, h.command);
  s.Bind(7, h.user);
  s.Bind(8, h.container_id);
  s.Bind(9, h.container_runtime);
  s.Bind(10, h.pod_uid);
  s.Bind(11, h.slurm_job_id);
  if (p.gpu_instance_id) {
    s.Bind(12, static_cast<std::int64_t>(*p.gpu_instance_id));
  } else {
    s.BindNull(12);
  }
  s.Bind(13, ts);
  return ReturningId(s);
}

Status BatchWriter::WriteEvent(const Event& e) {
  Stmt& s = insert_event_;
  s.Bind(1, ToMillis(e.time));
  s.Bind(2, EventKindName(e.kind));
  s.Bind(3, SeverityName(e.severity));
  s.Bind(4, e.source);
  if (e.gpu) {
    s.Bind(5, static_cast<std::int64_t>(*e.gpu));
  } else {
    s.BindNull(5);
  }
  if (e.process) {
    s.Bind(6, static_cast<std::int64_t>(e.process->pid));
    s.Bind(7, static_cast<std::int64_t>(e.process->start_ticks));
  } else {
    s.BindNull(6);
    s.BindNull(7);
  }
  s.BindOptional(8, e.value);
  s.Bind(9, e.message);
  return s.Run();
}

Status BatchWriter::WriteMark(const Mark& m) {
  Stmt& s = insert_mark_;
  s.Bind(1, ToMillis(m.time));
  s.Bind(2, MarkKindName(m.kind));
  s.BindOptional(3, m.value);
  s.Bind(4, m.label);
  if (m.process) {
    s.Bind(5, static_cast<std::int64_t>(m.process->pid));
    s.Bind(6, static_cast<std::int64_t>(m.process->start_ticks));
  } else {
    s.BindNull(5);
    s.BindNull(6);
  }
  return s.Run();
}

}  // namespace gpuwatch::store
