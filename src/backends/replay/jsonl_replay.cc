// Reads a gpuwatch.jsonl/1 recording: the header's static facts, "sample",
// "event" (marks included) and "framework" lines. Other line types are
// skipped (a newer writer's); a malformed line of a known type is an error
// naming file:line.
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "backends/replay/recording.h"

namespace gpuwatch::replay {
namespace {

using nlohmann::json;
using TimePoint = std::chrono::system_clock::time_point;

// "2026-11-30T06:13:55.355Z" -> time point; nullopt when malformed.
std::optional<TimePoint> ParseTime(const std::string& text) {
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return std::nullopt;
  int ms = 0;
  if (*rest == '.') {
    ms = std::atoi(rest + 1);
  }
  return std::chrono::system_clock::from_time_t(timegm(&tm)) + std::chrono::milliseconds(ms);
}

std::optional<TimePoint> TimeOf(const json& j) {
  const auto it = j.find("time");
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return ParseTime(it->get<std::string>());
}

template <Scope S>
void ReadFields(const json& values, const json& unavailable, FieldArray<S>& out) {
  if (values.is_object()) {
    for (const auto& item : values.items()) {
      const std::string& key = item.key();
      const json& v = item.value();
      const auto id = FindByKey(key);
      if (!id || !FieldArray<S>::Holds(*id)) continue;  // a newer recording's field
      if (v.is_number()) out[*id] = Reading::Number(v.get<double>());
      if (v.is_string()) out[*id] = Reading::Text(v.get<std::string>());
    }
  }
  if (unavailable.is_object()) {
    for (const auto& item : unavailable.items()) {
      const std::string& key = item.key();
      const json& why = item.value();
      const auto id = FindByKey(key);
      if (!id || !FieldArray<S>::Holds(*id)) continue;
      const std::string reason = why.is_object()   ? why.value("reason", "")
                                 : why.is_string() ? why.get<std::string>()
                                                   : "";
      const std::string detail = why.is_object() ? why.value("detail", "") : "";
      out[*id] = Reading::Absent(MissingFromName(reason), detail);
    }
  }
}

HostProcess::Visibility VisibilityFrom(const std::string& name) {
  if (name == "visible") return HostProcess::Visibility::kVisible;
  if (name == "other_pid_namespace") return HostProcess::Visibility::kOtherPidNs;
  if (name == "no_permission") return HostProcess::Visibility::kNoPermission;
  return HostProcess::Visibility::kExited;
}

ProcessSample ReadProcess(const json& j) {
  ProcessSample p;
  p.pid = j.value("pid", 0u);
  const std::string type = j.value("type", "compute");
  p.type = type == "graphics"           ? ProcessSample::Type::kGraphics
           : type == "compute+graphics" ? ProcessSample::Type::kComputeAndGraphics
                                        : ProcessSample::Type::kCompute;
  if (j.contains("gpu_instance_id") && j["gpu_instance_id"].is_number())
    p.gpu_instance_id = j["gpu_instance_id"].get<std::uint32_t>();
  if (j.contains("compute_instance_id") && j["compute_instance_id"].is_number()) {
    p.compute_instance_id = j["compute_instance_id"].get<std::uint32_t>();
  }
  HostProcess& h = p.host;
  h.visibility = VisibilityFrom(j.value("visibility", "exited"));
  h.name = j.value("name", "");
  h.command = j.value("command", "");
  h.user = j.value("user", "");
  if (j.contains("uid") && j["uid"].is_number()) h.uid = j["uid"].get<std::uint32_t>();
  h.start_ticks = j.value("start_ticks", std::uint64_t{0});
  if (j.contains("start_time") && j["start_time"].is_string())
    h.start_time = ParseTime(j["start_time"].get<std::string>());
  h.container_id = j.value("container_id", "");
  h.container_runtime = j.value("container_runtime", "");
  h.pod_uid = j.value("pod_uid", "");
  h.slurm_job_id = j.value("slurm_job_id", "");
  ReadFields(j.value("fields", json::object()), j.value("unavailable", json::object()), p.fields);
  return p;
}

DeviceHealth HealthFrom(const std::string& name) {
  if (name == "lost") return DeviceHealth::kLost;
  if (name == "error") return DeviceHealth::kError;
  return DeviceHealth::kOk;
}

template <typename Enum, typename NameFn>
std::optional<Enum> FromName(std::string_view name, Enum last, NameFn name_of) {
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    if (name_of(static_cast<Enum>(i)) == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

// `key` of `j` when present and not null; an error when it has another type.
template <typename T>
Result<std::optional<T>> Optional(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<T>();
  bool ok = false;
  if constexpr (std::is_same_v<T, std::string>) {
    ok = it->is_string();
  } else if constexpr (std::is_same_v<T, double>) {
    ok = it->is_number();
  } else if constexpr (std::is_unsigned_v<T>) {
    ok = it->is_number_unsigned();
  } else {
    ok = it->is_number_integer();
  }
  if (!ok) return Status::InvalidArgument(fmt::format("{}: bad \"{}\"", where, key));
  return std::optional<T>(it->get<T>());
}

// An "event" line (src/export/lines.cc EventToJson). Nothing when its kind
// is one this version does not know (`unknown_kind` says which).
Result<std::optional<Event>> ReadEvent(const json& j, const std::string& where,
                                       std::string& unknown_kind) {
  const std::string at = where + ": event";
  Event e;
  const auto time = TimeOf(j);
  if (!time) return Status::InvalidArgument(fmt::format("{}: bad \"time\"", at));
  e.time = *time;
  auto kind = Optional<std::string>(j, "kind", at);
  if (!kind) return kind.error();
  if (!*kind) return Status::InvalidArgument(fmt::format("{}: no \"kind\"", at));
  const auto k = FromName(**kind, Event::Kind::kMark, EventKindName);
  if (!k) {
    unknown_kind = **kind;
    return std::optional<Event>();
  }
  e.kind = *k;
  auto severity = Optional<std::string>(j, "severity", at);
  if (!severity) return severity.error();
  if (*severity) {
    const auto s = FromName(**severity, Severity::kCritical, SeverityName);
    if (!s) return Status::InvalidArgument(fmt::format("{}: bad \"severity\"", at));
    e.severity = *s;
  }
  auto source = Optional<std::string>(j, "source", at);
  auto message = Optional<std::string>(j, "message", at);
  auto gpu = Optional<int>(j, "gpu", at);
  auto pid = Optional<std::uint32_t>(j, "pid", at);
  auto start_ticks = Optional<std::uint64_t>(j, "start_ticks", at);
  auto value = Optional<double>(j, "value", at);
  auto to_full = Optional<std::int64_t>(j, "time_to_full_s", at);
  for (const Status& s : {source.status(), message.status(), gpu.status(), pid.status(),
                          start_ticks.status(), value.status(), to_full.status()}) {
    if (!s.ok()) return s;
  }
  e.source = source->value_or("");
  e.message = message->value_or("");
  e.gpu = *gpu;
  if (*pid) e.process = ProcessKey{**pid, start_ticks->value_or(0)};
  e.value = *value;
  if (*to_full) e.time_to_full = std::chrono::seconds(**to_full);
  return std::optional<Event>(std::move(e));
}

// {"type":"framework","time":...,"gpu":0,"framework":"torch","bytes":{"allocated":1}}
Result<FrameworkRecord> ReadFramework(const json& j, const std::string& where) {
  const std::string at = where + ": framework";
  FrameworkRecord f;
  const auto time = TimeOf(j);
  if (!time) return Status::InvalidArgument(fmt::format("{}: bad \"time\"", at));
  f.time = *time;
  auto gpu = Optional<int>(j, "gpu", at);
  if (!gpu) return gpu.error();
  if (!*gpu) return Status::InvalidArgument(fmt::format("{}: no \"gpu\"", at));
  f.gpu = **gpu;
  auto name = Optional<std::string>(j, "framework", at);
  if (!name) return name.error();
  if (!*name || (*name)->empty())
    return Status::InvalidArgument(fmt::format("{}: no \"framework\"", at));
  f.framework = **name;
  const auto bytes = j.find("bytes");
  if (bytes == j.end() || !bytes->is_object())
    return Status::InvalidArgument(fmt::format("{}: \"bytes\" is not an object", at));
  for (const auto& item : bytes->items()) {
    if (!item.value().is_number()) {
      return Status::InvalidArgument(
          fmt::format("{}: \"bytes\": \"{}\" is not a number", at, item.key()));
    }
    f.bytes[item.key()] = item.value().get<double>();
  }
  return f;
}

Status ReadHeader(const json& j, const std::string& where, Recording& r) {
  if (j.value("schema", "") != "gpuwatch.jsonl/1") {
    return Status::InvalidArgument(
        fmt::format("{}: schema \"{}\", expected gpuwatch.jsonl/1", where, j.value("schema", "")));
  }
  r.info.demo = j.value("demo", false);
  r.hostname = j.value("hostname", "");
  ReadFields(j.value("host", json::object()), json::object(), r.host);
  for (const auto& d : j.value("devices", json::array())) {
    DeviceFields f;
    ReadFields(d.value("fields", json::object()), json::object(), f);
    r.facts.push_back(std::move(f));
  }
  r.host[FieldId::kDeviceCount] = Reading::Number(static_cast<double>(r.facts.size()));
  return Status::Ok();
}

Result<RecordedSample> ReadSample(const json& j, const std::string& where) {
  const auto time = TimeOf(j);
  if (!time) return Status::InvalidArgument(fmt::format("{}: bad \"time\"", where));
  RecordedSample s;
  s.time = *time;
  for (const auto& d : j.value("devices", json::array())) {
    DeviceSample ds;
    ds.index = d.value("index", 0);
    ds.health = HealthFrom(d.value("health", "ok"));
    ReadFields(d.value("fields", json::object()), d.value("unavailable", json::object()),
               ds.fields);
    for (const auto& p : d.value("processes", json::array()))
      ds.processes.push_back(ReadProcess(p));
    s.devices.push_back(std::move(ds));
  }
  return s;
}

}  // namespace

Result<Recording> ReadJsonlRecording(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(fmt::format("cannot read the recording {}", path));
  Recording r;
  r.format = RecordingFormat::kJsonLines;
  r.info.library_path = path;
  std::set<std::string> unknown_kinds;
  std::size_t unknown_events = 0;
  std::string line;
  int number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const auto where = fmt::format("{}:{}", path, number);
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return Status::InvalidArgument(fmt::format(
          "{}: not a JSON object (is this a --jsonl recording or a --db history?)", where));
    }
    const std::string type = j.value("type", "");
    if (type == "header") {
      if (Status s = ReadHeader(j, where, r); !s.ok()) return s;
      header = true;
    } else if (type == "sample") {
      if (!header)
        return Status::InvalidArgument(fmt::format("{}: a sample before the header line", where));
      Result<RecordedSample> s = ReadSample(j, where);
      if (!s) return s.error();
      r.samples.push_back(std::move(*s));
    } else if (type == "event") {
      // May come before the header: a mark can arrive before the first sample.
      std::string unknown;
      Result<std::optional<Event>> e = ReadEvent(j, where, unknown);
      if (!e) return e.error();
      if (*e) {
        r.events.push_back(std::move(**e));
      } else {
        ++unknown_events;
        unknown_kinds.insert(unknown);
      }
    } else if (type == "framework") {
      Result<FrameworkRecord> f = ReadFramework(j, where);
      if (!f) return f.error();
      r.framework.push_back(std::move(*f));
    }  // another type: a newer writer's, skipped
  }
  if (!header)
    return Status::InvalidArgument(
        fmt::format("{}: no header line (is this a --jsonl recording?)", path));
  if (r.samples.empty()) return Status::InvalidArgument(fmt::format("{}: no samples", path));
  if (unknown_events > 0) {
    std::string kinds;
    for (const auto& k : unknown_kinds) kinds += (kinds.empty() ? "" : ", ") + k;
    r.notes.push_back(fmt::format("{} event(s) of kinds this gpuwatch does not know ({}) skipped",
                                  unknown_events, kinds));
  }
  const auto by_time = [](const auto& a, const auto& b) { return a.time < b.time; };
  std::stable_sort(r.events.begin(), r.events.end(), by_time);
  std::stable_sort(r.framework.begin(), r.framework.end(), by_time);
  return r;
}

}  // namespace gpuwatch::replay
