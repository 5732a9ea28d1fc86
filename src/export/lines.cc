#include "export/lines.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>

#include "core/printable.h"
#include "core/time_text.h"
#include "export/snapshot_json.h"

namespace gpuwatch {
namespace {

using nlohmann::json;

std::string Clock(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

bool Dynamic(const FieldInfo& f) {
  return f.scope == Scope::kDevice && f.cadence != Cadence::kStatic && f.unit != Unit::kText;
}

// Why `r` is missing: its reason's name, and with kAnswer the driver's
// words as well when it has some ({"reason": ..., "detail": ...}).
json WhyMissing(const Reading& r, JsonlDetail detail) {
  if (detail == JsonlDetail::kRecording || r.detail().empty()) return MissingName(r.missing());
  return {{"reason", MissingName(r.missing())}, {"detail", r.detail()}};
}

json Number(double x) {
  if (std::floor(x) == x && std::fabs(x) < 9e15) return static_cast<std::int64_t>(x);
  return x;
}

}  // namespace

std::string LogLine(const Snapshot& s, const DeviceSample& d) {
  const auto& f = d.fields;
  auto pct = [](const Reading& r) {
    return r.is_number() ? fmt::format("{:.1f}%", r.number() * 100) : "N/A";
  };
  std::string line = fmt::format("[{}] GPU {}", Clock(s.time), d.index);
  if (d.health == DeviceHealth::kLost) return line + ": LOST (" + Printable(d.health_detail) + ")";
  if (d.health == DeviceHealth::kStale) {
    return line + ": STALE (" + Printable(d.health_detail) + ")";
  }
  const Reading& temp = f[FieldId::kTemperatureGpuCelsius];
  const Reading& power = f[FieldId::kPowerDrawWatts];
  line += fmt::format(": Mem={} Util={} Temp={} Power={}", pct(f[FieldId::kMemoryUsedRatio]),
                      pct(f[FieldId::kUtilizationGpuRatio]),
                      temp.is_number() ? fmt::format("{:.0f}°C", temp.number()) : "N/A",
                      power.is_number() ? fmt::format("{:.0f}W", power.number()) : "N/A");
  if (s.stale) line += " (stale: sampler hung)";
  return line;
}

std::string EventLogLine(const Event& e) {
  std::string where;
  if (e.gpu) where = fmt::format(" GPU {}", *e.gpu);
  // Messages carry process names and what jobs sent: one line, no escapes.
  return Printable(fmt::format("[{}] {} {}{}: {}", Clock(e.time), EventKindName(e.kind), e.source,
                               where, e.message));
}

const std::vector<std::string>& CsvColumns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c = {"time", "sequence", "gpu", "uuid"};
    for (const auto& f : Catalogue()) {
      if (Dynamic(f)) c.emplace_back(f.key);
    }
    return c;
  }();
  return columns;
}

std::string CsvHeader() {
  std::string out;
  for (const auto& c : CsvColumns()) out += (out.empty() ? "" : ",") + c;
  return out;
}

std::vector<std::string> CsvRows(const Snapshot& s) {
  std::vector<std::string> rows;
  for (const auto& d : s.devices) {
    if (d.health == DeviceHealth::kStale) continue;  // the last values again: a gap, not a repeat
    const Reading& uuid = d.fields[FieldId::kUuid];
    std::string row = fmt::format("{},{},{},{}", Rfc3339(s.time), s.sequence, d.index,
                                  uuid.is_text() ? uuid.text() : "");
    for (const auto& f : Catalogue()) {
      if (!Dynamic(f)) continue;
      const Reading& r = d.fields[f.id];
      row += ",";
      if (r.is_number()) row += Number(r.number()).dump();  // N/A is an empty cell, never 0
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string JsonlHeader(const Snapshot& first, const std::string& hostname) {
  json devices = json::array();
  for (const auto& d : first.devices) {
    json facts = json::object();
    json unavailable = json::object();
    for (const auto& f : Catalogue()) {
      if (f.scope != Scope::kDevice || f.cadence != Cadence::kStatic) continue;
      const Reading& r = d.fields[f.id];
      if (r.is_number()) facts[std::string(f.key)] = Number(r.number());
      if (r.is_text()) facts[std::string(f.key)] = r.text();
      if (!r.ok() && r.missing() != Missing::kNotYetSampled)
        unavailable[std::string(f.key)] = WhyMissing(r, JsonlDetail::kAnswer);
    }
    devices.push_back({{"index", d.index},
                       {"fields", std::move(facts)},
                       {"unavailable", std::move(unavailable)}});
  }
  json host = json::object();
  for (const auto& f : Catalogue()) {
    if (f.scope != Scope::kHost) continue;
    const Reading& r = first.host[f.id];
    if (r.is_text()) host[std::string(f.key)] = r.text();
    if (r.is_number()) host[std::string(f.key)] = Number(r.number());
  }
  return json{{"type", "header"},   {"schema", kJsonlSchema}, {"hostname", hostname},
              {"demo", first.demo}, {"source", first.source}, {"host", host},
              {"devices", devices}}
      .dump();
}

std::string JsonlSample(const Snapshot& s, JsonlDetail detail) {
  json devices = json::array();
  for (const auto& d : s.devices) {
    json values = json::object();
    json unavailable = json::object();
    for (const auto& f : Catalogue()) {
      if (!Dynamic(f)) continue;
      const Reading& r = d.fields[f.id];
      if (r.is_number()) {
        values[std::string(f.key)] = Number(r.number());
      } else if (!r.ok() && r.missing() != Missing::kNotYetSampled) {
        unavailable[std::string(f.key)] = WhyMissing(r, detail);
      }
    }
    json procs = json::array();
    for (const auto& p : d.processes) {
      json pj = ProcessToJson(p);
      pj["start_ticks"] = p.host.start_ticks;
      procs.push_back(std::move(pj));
    }
    json device = {{"index", d.index},
                   {"health", HealthName(d.health)},
                   {"fields", std::move(values)},
                   {"unavailable", std::move(unavailable)},
                   {"processes", std::move(procs)}};
    if (detail == JsonlDetail::kAnswer && !d.health_detail.empty())
      device["health_detail"] = d.health_detail;
    devices.push_back(std::move(device));
  }
  return json{{"type", "sample"},
              {"time", Rfc3339(s.time)},
              {"sequence", s.sequence},
              {"stale", s.stale},
              {"sample_duration_us", s.sample_duration.count()},
              {"devices", std::move(devices)}}
      .dump();
}

json EventToJson(const Event& e) {
  json j = {{"time", Rfc3339(e.time)},
            {"kind", EventKindName(e.kind)},
            {"severity", SeverityName(e.severity)},
            {"source", e.source},
            {"gpu", e.gpu ? json(*e.gpu) : json(nullptr)},
            {"pid", e.process ? json(e.process->pid) : json(nullptr)},
            {"value", e.value ? Number(*e.value) : json(nullptr)},
            {"message", e.message}};
  if (e.time_to_full) j["time_to_full_s"] = e.time_to_full->count();
  return j;
}

std::string JsonlEvent(const Event& e) {
  json j = EventToJson(e);
  j["type"] = "event";
  return j.dump();
}

std::string JsonlFramework(std::chrono::system_clock::time_point time, int gpu,
                           const std::string& framework,
                           const std::map<std::string, double, std::less<>>& bytes,
                           std::optional<std::uint32_t> pid) {
  json values = json::object();
  for (const auto& [kind, v] : bytes) values[kind] = Number(v);
  json j{{"type", "framework"},
         {"time", Rfc3339(time)},
         {"gpu", gpu},
         {"framework", framework},
         {"bytes", std::move(values)}};
  if (pid) j["pid"] = *pid;
  return j.dump();
}

}  // namespace gpuwatch
