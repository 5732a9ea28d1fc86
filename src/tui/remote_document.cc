// The JSON API's documents read back: ParseSnapshotDocument and
// ParseEventsDocument of remote_api.h, the inverse of export's
// SnapshotDocument (api_documents.cc, snapshot_json.cc, host/lease_json.cc)
// and EventDocument. Field keys come from the catalogue.
#include <fmt/format.h>

#include <cmath>

#include "export/api_documents.h"
#include "export/snapshot_json.h"
#include "tui/remote_api.h"
#include "tui/remote_json.h"

namespace gpuwatch::tui {
namespace {

using nlohmann::json;

constexpr int kMaxIndex = 1023;  // of a GPU or MIG device: a bound, not a limit of NVML
constexpr std::int64_t kCenturySeconds = std::int64_t{100} * 365 * 24 * 3600;

DeviceSample ReadDevice(const json& d, const std::string& at, JsonMembers& m) {
  DeviceSample ds;
  ds.index = m.Integer<int>(d, at, "index", 0, kMaxIndex).value_or(0);
  ds.mig_index = m.Integer<int>(d, at, "mig_index", 0, kMaxIndex);
  if (ds.mig_index) {
    ds.gpu_instance_id = m.Integer<std::uint32_t>(d, at, "gpu_instance_id");
    ds.compute_instance_id = m.Integer<std::uint32_t>(d, at, "compute_instance_id");
  }
  const std::string health = m.Text(d, at, "health", "ok");
  ds.health_detail = m.Text(d, at, "health_detail");
  const auto h = FromName(health, DeviceHealth::kStale, HealthName);
  ds.health = h.value_or(DeviceHealth::kError);
  if (!h && ds.health_detail.empty()) ds.health_detail = "health \"" + health + "\"";
  ReadFields(d, at, m, ds.fields);
  ReadProcesses(d, at, m, ds.processes);
  return ds;
}

// What jobs reported for GPU `gpu` (a device's "framework").
void ReadFramework(const json& d, const std::string& at, int gpu, JsonMembers& m,
                   std::vector<ProcessFrameworkMemory>& out) {
  const json& list = m.Array(d, at, "framework");
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::string fat = JsonMembers::Path(at, "framework", k);
    ProcessFrameworkMemory f;
    f.gpu = gpu;
    f.pid = m.Integer<std::uint32_t>(list[k], fat, "pid").value_or(0);
    f.framework = m.Text(list[k], fat, "framework");
    f.time = UnixTime(m, list[k], fat, "time").value_or(TimePoint{});
    const std::string bat = JsonMembers::Path(fat, "bytes");
    const json& bytes = m.Object(list[k], fat, "bytes");
    for (const auto& item : bytes.items()) {
      if (const auto v = m.Number(bytes, bat, item.key()))
        f.bytes[item.key()] = *v;  // null: not sent
    }
    out.push_back(std::move(f));
  }
}

host::Lease ReadLease(const json& j, const std::string& at, JsonMembers& m) {
  host::Lease l;
  l.device = m.Text(j, at, "device");
  l.uuid = m.Text(j, at, "uuid");
  l.user = m.Text(j, at, "user");
  l.command = m.Text(j, at, "command");
  l.ticket = m.Integer<std::uint64_t>(j, at, "ticket").value_or(0);
  l.since = m.Time(j, at, "since").value_or(TimePoint{});
  const json& holders = m.Array(j, at, "holders");
  for (std::size_t k = 0; k < holders.size(); ++k) {
    const std::string hat = JsonMembers::Path(at, "holders", k);
    l.holders.push_back({m.Integer<std::uint32_t>(holders[k], hat, "pid").value_or(0),
                         m.Integer<std::uint64_t>(holders[k], hat, "start_ticks").value_or(0)});
  }
  if (l.holders.empty()) {  // the first holder's pid is there even when the list is not
    if (auto pid = m.Integer<std::uint32_t>(j, at, "pid")) l.holders.push_back({*pid, 0});
  }
  return l;
}

// The leases of the devices and MIG devices and the wait queue; none when
// the document has no lease keys (the daemon reads no lease file) or says
// the file could not be read.
std::optional<host::LeaseTable> ReadLeases(const json& doc, JsonMembers& m) {
  if (!m.Text(doc, "", "lease_error").empty() || !doc.contains("lease_queue")) return std::nullopt;
  host::LeaseTable table;
  const json& devices = m.Array(doc, "", "devices");
  auto take = [&](const json& d, const std::string& at) {
    const json* lease = JsonMembers::Find(d, "lease");
    if (lease == nullptr) return;  // free
    if (!lease->is_object()) return m.Wrong(JsonMembers::Path(at, "lease"), "an object", *lease);
    table.leases.push_back(ReadLease(*lease, JsonMembers::Path(at, "lease"), m));
  };
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const std::string at = JsonMembers::Path("", "devices", i);
    take(devices[i], at);
    const json& migs = m.Array(devices[i], at, "mig_devices");
    for (std::size_t k = 0; k < migs.size(); ++k)
      take(migs[k], JsonMembers::Path(at, "mig_devices", k));
  }
  const json& queue = m.Array(doc, "", "lease_queue");
  for (std::size_t k = 0; k < queue.size(); ++k) {
    const std::string at = JsonMembers::Path("", "lease_queue", k);
    host::Waiter w;
    w.ticket = m.Integer<std::uint64_t>(queue[k], at, "ticket").value_or(0);
    w.holder.pid = m.Integer<std::uint32_t>(queue[k], at, "pid").value_or(0);
    w.user = m.Text(queue[k], at, "user");
    w.command = m.Text(queue[k], at, "command");
    w.count = m.Integer<int>(queue[k], at, "count", 1, 1 << 16).value_or(1);
    w.wants = m.Text(queue[k], at, "wants");
    w.since = m.Time(queue[k], at, "since").value_or(TimePoint{});
    table.queue.push_back(std::move(w));
  }
  for (const auto& l : table.leases) table.next_ticket = std::max(table.next_ticket, l.ticket + 1);
  for (const auto& w : table.queue) table.next_ticket = std::max(table.next_ticket, w.ticket + 1);
  return table;
}

// GPU `gpu`'s total memory in `s` (a leak's capacity), when known.
std::optional<double> TotalMemory(const Snapshot* s, int gpu) {
  if (s == nullptr) return std::nullopt;
  for (const DeviceSample& d : s->devices) {
    const Reading& total = d.fields[FieldId::kMemoryTotalBytes];
    if (d.index == gpu && total.is_number()) return total.number();
  }
  return std::nullopt;
}

std::optional<ProcessKey> PidOf(const json& j, const std::string& at, JsonMembers& m) {
  const auto pid = m.Integer<std::uint32_t>(j, at, "pid");
  if (!pid) return std::nullopt;
  return ProcessKey{*pid, m.Integer<std::uint64_t>(j, at, "start_ticks").value_or(0)};
}

void ReadAnalyses(const json& doc, const Snapshot* s, JsonMembers& m, HostState& st) {
  const json& alerts = m.Array(doc, "", "alerts");
  for (std::size_t k = 0; k < alerts.size(); ++k) {
    const std::string at = JsonMembers::Path("", "alerts", k);
    rules::ActiveAlert a;
    a.rule = m.Text(alerts[k], at, "rule");
    a.severity = FromName(m.Text(alerts[k], at, "severity"), Severity::kCritical, SeverityName)
                     .value_or(Severity::kWarning);
    a.gpu = m.Integer<int>(alerts[k], at, "gpu", 0, kMaxIndex).value_or(0);
    a.process = PidOf(alerts[k], at, m);
    a.value = m.Number(alerts[k], at, "value");
    a.message = m.Text(alerts[k], at, "message");
    a.since = UnixTime(m, alerts[k], at, "since").value_or(TimePoint{});
    st.alerts.push_back(std::move(a));
  }
  const json& leaks = m.Array(doc, "", "leaks");
  for (std::size_t k = 0; k < leaks.size(); ++k) {
    const std::string at = JsonMembers::Path("", "leaks", k);
    const std::string state = m.Text(leaks[k], at, "state");
    if (state != "leak" && state != "oom_forecast") continue;  // a newer daemon's verdict
    leaks::LeakReport r;
    r.estimate.suspected = state == "leak";
    r.estimate.forecast = !r.estimate.suspected;
    r.subject.gpu = m.Integer<int>(leaks[k], at, "gpu", 0, kMaxIndex).value_or(0);
    r.subject.process = PidOf(leaks[k], at, m);
    r.subject.framework = m.Text(leaks[k], at, "framework");
    r.estimate.rate_bytes_per_s = m.Number(leaks[k], at, "rate_bytes_per_second").value_or(0);
    r.estimate.confidence = m.Number(leaks[k], at, "confidence").value_or(0);
    r.bytes_per_step = m.Number(leaks[k], at, "bytes_per_step");
    if (const auto to_oom = m.Number(leaks[k], at, "time_to_oom_seconds"); to_oom) {
      if (std::fabs(*to_oom) < kCenturySeconds) {
        r.time_to_full = std::chrono::seconds(std::llround(*to_oom));
      } else {
        m.Wrong(JsonMembers::Path(at, "time_to_oom_seconds"), "seconds within a century",
                leaks[k]["time_to_oom_seconds"]);
      }
    }
    r.capacity_bytes = TotalMemory(s, r.subject.gpu);
    st.leaks.push_back(std::move(r));
  }
  const json& pre = m.Array(doc, "", "preallocated");
  for (std::size_t k = 0; k < pre.size(); ++k) {
    const std::string at = JsonMembers::Path("", "preallocated", k);
    Preallocation p;
    p.gpu = m.Integer<int>(pre[k], at, "gpu", 0, kMaxIndex).value_or(0);
    p.process = PidOf(pre[k], at, m).value_or(ProcessKey{});
    p.bytes = m.Number(pre[k], at, "bytes").value_or(0);
    p.share = m.Number(pre[k], at, "share").value_or(0);
    st.preallocated.push_back(p);
  }
}

std::string Prefix(const std::string& where) { return where.empty() ? "" : where + ": "; }

Status NotApi(const std::string& where, std::string_view why) {
  return Status::InvalidArgument(fmt::format("{}not a gpuwatch API: {}", Prefix(where), why));
}

// The schema of an API document, or why it is not one.
Status CheckSchema(const json& doc, const std::string& where, std::string_view must_have) {
  if (!doc.is_object()) return NotApi(where, fmt::format("the answer is {}", doc.type_name()));
  const auto schema = doc.find("schema");
  if (schema == doc.end()) return NotApi(where, "no \"schema\"");
  if (!schema->is_string() || *schema != kApiSchema) {
    return NotApi(where,
                  fmt::format("schema {}, this version reads {}", schema->dump(), kApiSchema));
  }
  if (!doc.contains(must_have) || !doc[std::string(must_have)].is_array())
    return NotApi(where, fmt::format("no \"{}\" list", must_have));
  return Status::Ok();
}

}  // namespace

Result<HostState> ParseSnapshotDocument(const json& doc, const std::string& where) {
  if (Status s = CheckSchema(doc, where, "devices"); !s.ok()) return s;
  JsonMembers m;
  HostState st;
  st.label = where;
  st.hostname = m.Text(doc, "", "hostname");
  std::shared_ptr<Snapshot> s;
  if (JsonMembers::Find(doc, "time") != nullptr) {  // null: the daemon has no sample yet
    s = std::make_shared<Snapshot>();
    s->time = UnixTime(m, doc, "", "time").value_or(TimePoint{});
    s->sequence = m.Integer<std::uint64_t>(doc, "", "sequence").value_or(0);
    s->stale = m.Flag(doc, "", "stale", false);
    s->demo = m.Flag(doc, "", "demo", false);
    s->source = m.Text(doc, "", "source");
    if (const auto d = m.Number(doc, "", "sample_duration_seconds"); d && *d >= 0 && *d < 1e6)
      s->sample_duration = std::chrono::microseconds(std::llround(*d * 1e6));
    ReadFields(m.Object(doc, "", "host"), "host", m, s->host);
    const json& devices = m.Array(doc, "", "devices");
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const std::string at = JsonMembers::Path("", "devices", i);
      if (!devices[i].is_object()) {
        m.Wrong(at, "an object", devices[i]);
        continue;
      }
      s->devices.push_back(ReadDevice(devices[i], at, m));
      ReadFramework(devices[i], at, s->devices.back().index, m, st.framework);
      const json& migs = m.Array(devices[i], at, "mig_devices");
      for (std::size_t k = 0; k < migs.size(); ++k) {
        const std::string mat = JsonMembers::Path(at, "mig_devices", k);
        if (!migs[k].is_object()) {
          m.Wrong(mat, "an object", migs[k]);
          continue;
        }
        s->mig_devices.push_back(ReadDevice(migs[k], mat, m));
        if (!s->mig_devices.back().mig_index) m.Wrong(mat + ".mig_index", "a MIG index", nullptr);
      }
    }
  }
  ReadAnalyses(doc, s.get(), m, st);
  st.leases = ReadLeases(doc, m);
  if (!m.error().empty()) return NotApi(where, m.error());
  st.snapshot = std::move(s);
  return st;
}

Result<std::vector<Event>> ParseEventsDocument(const json& doc, const std::string& where) {
  if (Status s = CheckSchema(doc, where, "events"); !s.ok()) return s;
  JsonMembers m;
  std::vector<Event> out;
  const json& list = m.Array(doc, "", "events");
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::string at = JsonMembers::Path("", "events", k);
    if (!list[k].is_object()) {
      m.Wrong(at, "an object", list[k]);
      continue;
    }
    const auto kind = FromName(m.Text(list[k], at, "kind"), Event::Kind::kMark, EventKindName);
    if (!kind) continue;  // a kind this version does not know
    Event e;
    e.kind = *kind;
    e.time = UnixTime(m, list[k], at, "time").value_or(TimePoint{});
    e.severity = FromName(m.Text(list[k], at, "severity"), Severity::kCritical, SeverityName)
                     .value_or(Severity::kInfo);
    e.source = m.Text(list[k], at, "source");
    e.gpu = m.Integer<int>(list[k], at, "gpu", 0, kMaxIndex);
    e.process = PidOf(list[k], at, m);
    e.value = m.Number(list[k], at, "value");
    if (auto to_full = m.Integer<std::int64_t>(list[k], at, "time_to_full_s", -kCenturySeconds,
                                               kCenturySeconds))
      e.time_to_full = std::chrono::seconds(*to_full);
    e.message = m.Text(list[k], at, "message");
    out.push_back(std::move(e));
  }
  if (!m.error().empty()) return NotApi(where, m.error());
  return out;
}

}  // namespace gpuwatch::tui
