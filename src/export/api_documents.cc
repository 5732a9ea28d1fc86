#include "export/api_documents.h"

#include <fmt/format.h>

#include <cmath>

#include "export/lines.h"
#include "export/snapshot_json.h"
#include "export/snapshot_leases.h"

namespace gpuwatch {
namespace {

using nlohmann::json;

// NVML's clock event reason bits (nvmlClocksEventReason*).
const std::pair<unsigned, std::string_view> kReasonNames[] = {
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
};

json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// The leases of a document; a file that could not be read shows as none,
// with "lease_error" saying why.
void PutLeases(json& doc, const LeaseRead& leases) {
  AddLeases(doc, leases ? *leases : host::LeaseTable{}, LeaseKeys::kEveryDevice);
  doc["lease_error"] = leases ? json(nullptr) : json(leases.error().message());
}

// The snapshot document without leases.
json SnapshotBody(const Published& p, const ApiContext& c) {
  if (!p.snapshot) {
    return json{{"schema", kApiSchema},
                {"time", nullptr},
                {"sequence", 0},
                {"devices", json::array()},
                {"hostname", c.hostname},
                {"alerts", json::array()},
                {"leaks", json::array()},
                {"diagnoses", json::array()},
                {"stale", true},
                {"demo", false},
                {"interval_seconds", c.interval_seconds}};
  }
  const Snapshot& s = *p.snapshot;
  json j = SnapshotToJson(s, c.hostname);
  j["schema"] = kApiSchema;
  j["time_iso"] = j["time"];
  j["time"] = UnixSeconds(s.time);
  j["sequence"] = s.sequence;
  j["stale"] = s.stale;
  j["interval_seconds"] = c.interval_seconds;
  j["sample_duration_seconds"] = static_cast<double>(s.sample_duration.count()) / 1e6;
  json& host = j["host"];
  for (FieldId id : {FieldId::kDriverVersion, FieldId::kCudaDriverVersion}) {
    const Reading& r = s.host[id];
    host[std::string(Info(id).key)] = r.is_text()     ? json(r.text())
                                      : r.is_number() ? json(r.number())
                                                      : json(nullptr);
  }
  for (auto& d : j["devices"]) {
    d["framework"] = json::array();
    for (const ProcessFrameworkMemory& f : p.framework) {
      if (f.gpu != d["index"].get<int>()) continue;
      json bytes = {{"allocated", nullptr}, {"reserved", nullptr}};  // always there, maybe null
      for (const auto& [kind, value] : f.bytes) bytes[kind] = value;
      d["framework"].push_back({{"pid", f.pid},
                                {"framework", f.framework},
                                {"bytes", std::move(bytes)},
                                {"time", UnixSeconds(f.time)}});
    }
    // Identity at the device level too, for readers that want no field lookup.
    for (const char* key : {"name", "uuid"}) {
      const auto& v = d["fields"].contains(key) ? d["fields"][key] : json();
      d[key] = v.is_string() ? v : json("");
    }
  }
  json alerts = json::array();
  for (const auto& a : p.alerts) {
    alerts.push_back({{"rule", a.rule},
                      {"severity", SeverityName(a.severity)},
                      {"gpu", a.gpu},
                      {"pid", a.process ? json(a.process->pid) : json(nullptr)},
                      {"value", Optional(a.value)},
                      {"message", a.message},
                      {"since", UnixSeconds(a.since)}});
  }
  j["alerts"] = std::move(alerts);
  json leaks = json::array();
  for (const auto& r : p.leaks) {
    if (!r.estimate.suspected && !r.estimate.forecast) continue;
    const bool framework = !r.subject.framework.empty();
    leaks.push_back(
        {{"gpu", r.subject.gpu},
         {"state", r.estimate.suspected ? "leak" : "oom_forecast"},
         {"scope", framework           ? "framework"
                   : r.subject.process ? "process"
                                       : "device"},
         {"framework", framework ? json(r.subject.framework) : json(nullptr)},
         {"pid", r.subject.process ? json(r.subject.process->pid) : json(nullptr)},
         {"rate_bytes_per_second", r.estimate.rate_bytes_per_s},
         {"bytes_per_step", Optional(r.bytes_per_step)},
         {"time_to_oom_seconds",
          r.time_to_full ? json(static_cast<double>(r.time_to_full->count())) : json(nullptr)},
         {"confidence", r.estimate.confidence},
         {"message",
          fmt::format(
              "{} {:.1f} MiB/min (floor {:.1f} GiB)",
              framework ? fmt::format("{} allocated memory on GPU {} grows", r.subject.framework,
                                      r.subject.gpu)
              : r.subject.process
                  ? fmt::format("pid {} on GPU {} leaks", r.subject.process->pid, r.subject.gpu)
                  : fmt::format("GPU {} memory grows", r.subject.gpu),
              r.estimate.rate_mib_per_min(), r.estimate.floor_bytes / (1024.0 * 1024 * 1024))}});
  }
  j["leaks"] = std::move(leaks);
  json preallocated = json::array();
  for (const auto& a : p.preallocated) {
    preallocated.push_back(
        {{"gpu", a.gpu}, {"pid", a.process.pid}, {"bytes", a.bytes}, {"share", a.share}});
  }
  j["preallocated"] = std::move(preallocated);
  json diagnoses = json::array();
  for (const auto& x : p.diagnoses) {
    diagnoses.push_back({{"gpu", x.gpu},
                         {"kind", x.kind},
                         {"severity", SeverityName(x.severity)},
                         {"message", x.message},
                         {"since", UnixSeconds(x.since)},
                         {"pid", x.process ? json(x.process->pid) : json(nullptr)}});
  }
  j["diagnoses"] = std::move(diagnoses);
  json names = json::object();
  for (const auto& [bit, name] : kReasonNames) names[std::to_string(bit)] = name;
  j["clock_event_reason_names"] = std::move(names);
  return j;
}

}  // namespace

double UnixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

json SnapshotDocument(const Published& p, const ApiContext& c, const LeaseRead* leases) {
  json j = SnapshotBody(p, c);
  if (leases != nullptr) PutLeases(j, *leases);
  return j;
}

json DevicesDocument(const Published& p, const LeaseRead* leases) {
  json devices = json::array();
  if (p.snapshot) {
    for (const auto& d : p.snapshot->devices) {
      json facts = json::object();
      for (const auto& f : Catalogue()) {
        if (f.scope != Scope::kDevice || f.cadence != Cadence::kStatic) continue;
        const Reading& r = d.fields[f.id];
        facts[std::string(f.key)] = r.is_text()     ? json(r.text())
                                    : r.is_number() ? json(r.number())
                                                    : json(nullptr);
      }
      json device = {{"index", d.index},
                     {"health", HealthName(d.health)},
                     {"processes", d.processes.size()},
                     {"facts", std::move(facts)}};
      if (leases != nullptr) {
        const Reading& uuid = d.fields[FieldId::kUuid];
        const host::Lease* lease =
            *leases && uuid.is_text() ? (*leases)->Find(uuid.text()) : nullptr;
        device["lease"] = lease != nullptr ? LeaseToJson(*lease) : json(nullptr);
      }
      devices.push_back(std::move(device));
    }
  }
  json doc = {{"schema", kApiSchema}, {"devices", std::move(devices)}};
  if (leases != nullptr) {
    doc["lease_error"] = *leases ? json(nullptr) : json(leases->error().message());
  }
  return doc;
}

json ProcessesDocument(const Published& p) {
  json procs = json::array();
  if (p.snapshot) {
    for (const auto& d : p.snapshot->devices) {
      for (const auto& proc : d.processes) {
        json pj = ProcessToJson(proc);
        pj["gpu"] = d.index;
        procs.push_back(std::move(pj));
      }
    }
  }
  return json{{"schema", kApiSchema}, {"processes", std::move(procs)}};
}

json LeasesDocument(const host::LeaseTable& table) {
  json j = LeasesToJson(table);
  j["schema"] = kApiSchema;
  return j;
}

json EventDocument(const Event& e) {
  json j = EventToJson(e);
  j["time_iso"] = j["time"];
  j["time"] = UnixSeconds(e.time);
  return j;
}

json EventsDocument(const std::vector<Event>& events) {
  json list = json::array();
  for (const auto& e : events) list.push_back(EventDocument(e));
  return json{{"schema", kApiSchema}, {"events", std::move(list)}};
}

json RingHistoryDocument(const FieldHistory::Window& window, int device,
                         const std::vector<FieldId>& fields) {
  json t = json::array();
  for (const auto time : window.times) t.push_back(UnixSeconds(time));
  json out_fields = json::object();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    json values = json::array();
    for (const double v : window.values[i])
      values.push_back(std::isnan(v) ? json(nullptr) : json(v));
    out_fields[std::string(Info(fields[i]).key)] = {
        {"avg", values}, {"min", values}, {"max", values}};
  }
  return json{{"schema", kApiSchema}, {"device", device},  {"tier", "memory"},
              {"step_seconds", 0},    {"t", std::move(t)}, {"fields", std::move(out_fields)}};
}

}  // namespace gpuwatch
