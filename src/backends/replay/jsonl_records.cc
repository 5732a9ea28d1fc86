#include "backends/replay/jsonl_records.h"

#include <fmt/format.h>

#include <ctime>

#include "core/json_members.h"

namespace gpuwatch::replay::jsonl {
namespace {

using nlohmann::json;
using TimePoint = std::chrono::system_clock::time_point;

// "2026-11-30T06:13:55.355Z" -> time point; nullopt when malformed or
// outside the years the clock holds (1678 .. 2262 in nanoseconds).
std::optional<TimePoint> ParseTime(const std::string& text) {
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr || tm.tm_year < 0 || tm.tm_year > 300) return std::nullopt;  // 1900..2200
  std::int64_t ms = 0;
  if (*rest == '.') {
    int scale = 100;  // the first three digits of the fraction
    for (const char* p = rest + 1; *p >= '0' && *p <= '9'; ++p, scale /= 10)
      ms += (*p - '0') * scale;
  }
  return std::chrono::system_clock::from_time_t(timegm(&tm)) + std::chrono::milliseconds(ms);
}

std::optional<TimePoint> TimeOf(const json& j) {
  const auto it = j.find("time");
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return ParseTime(it->get<std::string>());
}

// `values` (objects, at `values_at` and `why_at` in the line) maps field
// keys to numbers (text for text fields), `unavailable` to reasons; keys
// this version does not know are skipped (a newer recording's field).
template <Scope S>
void ReadFields(const json& values, const std::string& values_at, const json& unavailable,
                const std::string& why_at, JsonMembers& m, FieldArray<S>& out) {
  for (const auto& item : values.items()) {
    const std::string& key = item.key();
    const json& v = item.value();
    const auto id = FindByKey(key);
    if (!id || !FieldArray<S>::Holds(*id) || v.is_null()) continue;
    const bool text = Info(*id).unit == Unit::kText;
    if (text && v.is_string()) {
      out[*id] = Reading::Text(v.get<std::string>());
    } else if (!text && v.is_number()) {
      out[*id] = Reading::Number(v.get<double>());
    } else {
      m.Wrong(JsonMembers::Path(values_at, key), text ? "text" : "a number", v);
    }
  }
  for (const auto& item : unavailable.items()) {
    const std::string& key = item.key();
    const json& why = item.value();
    const auto id = FindByKey(key);
    if (!id || !FieldArray<S>::Holds(*id)) continue;
    std::string reason;
    std::string detail;
    if (why.is_object()) {
      const std::string path = JsonMembers::Path(why_at, key);
      reason = m.Text(why, path, "reason");
      detail = m.Text(why, path, "detail");
    } else if (why.is_string()) {
      reason = why.get<std::string>();
    } else if (!why.is_null()) {
      m.Wrong(JsonMembers::Path(why_at, key), "a reason (text or an object)", why);
    }
    out[*id] = Reading::Absent(MissingFromName(reason), detail);
  }
}

HostProcess::Visibility VisibilityFrom(const std::string& name) {
  if (name == "visible") return HostProcess::Visibility::kVisible;
  if (name == "other_pid_namespace") return HostProcess::Visibility::kOtherPidNs;
  if (name == "no_permission") return HostProcess::Visibility::kNoPermission;
  return HostProcess::Visibility::kExited;
}

ProcessSample ReadProcess(const json& j, const std::string& at, JsonMembers& m) {
  ProcessSample p;
  p.pid = m.Integer<std::uint32_t>(j, at, "pid").value_or(0);
  const std::string type = m.Text(j, at, "type", "compute");
  p.type = type == "graphics"           ? ProcessSample::Type::kGraphics
           : type == "compute+graphics" ? ProcessSample::Type::kComputeAndGraphics
                                        : ProcessSample::Type::kCompute;
  p.gpu_instance_id = m.Integer<std::uint32_t>(j, at, "gpu_instance_id");
  p.compute_instance_id = m.Integer<std::uint32_t>(j, at, "compute_instance_id");
  HostProcess& h = p.host;
  h.visibility = VisibilityFrom(m.Text(j, at, "visibility", "exited"));
  h.name = m.Text(j, at, "name");
  h.command = m.Text(j, at, "command");
  h.user = m.Text(j, at, "user");
  h.uid = m.Integer<std::uint32_t>(j, at, "uid");
  h.start_ticks = m.Integer<std::uint64_t>(j, at, "start_ticks").value_or(0);
  const std::string start_time = m.Text(j, at, "start_time");
  if (!start_time.empty()) h.start_time = ParseTime(start_time);
  h.container_id = m.Text(j, at, "container_id");
  h.container_runtime = m.Text(j, at, "container_runtime");
  h.pod_uid = m.Text(j, at, "pod_uid");
  h.slurm_job_id = m.Text(j, at, "slurm_job_id");
  ReadFields(m.Object(j, at, "fields"), JsonMembers::Path(at, "fields"),
             m.Object(j, at, "unavailable"), JsonMembers::Path(at, "unavailable"), m, p.fields);
  return p;
}

DeviceHealth HealthFrom(const std::string& name) {
  if (name == "lost") return DeviceHealth::kLost;
  if (name == "error") return DeviceHealth::kError;
  if (name == "stale") return DeviceHealth::kStale;  // the last values again: not analysed
  return DeviceHealth::kOk;
}

template <typename Enum, typename NameFn>
std::optional<Enum> FromName(std::string_view name, Enum last, NameFn name_of) {
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    if (name_of(static_cast<Enum>(i)) == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

// `key` of `j` when present and not null; an error when it has another
// type, or is a number T cannot hold.
template <typename T>
Result<std::optional<T>> Optional(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<T>();
  bool ok = false;
  if constexpr (std::is_same_v<T, std::string>) {
    ok = it->is_string();
  } else if constexpr (std::is_same_v<T, double>) {
    ok = it->is_number();
  } else {
    JsonMembers m;
    const std::optional<T> v = m.Integer<T>(j, "", key);
    if (v) return std::optional<T>(*v);
  }
  if (!ok) return Status::InvalidArgument(fmt::format("{}: bad \"{}\"", where, key));
  return std::optional<T>(it->get<T>());
}

Status Checked(const JsonMembers& m, const std::string& where) {
  if (m.error().empty()) return Status::Ok();
  return Status::InvalidArgument(fmt::format("{}: field {}", where, m.error()));
}

Status TooMany(const std::string& where, std::string_view what, std::size_t count,
               std::size_t most) {
  return Status::InvalidArgument(
      fmt::format("{}: {} {}, more than the {} a recording may hold", where, count, what, most));
}

}  // namespace

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
  if (*to_full) {
    // Seconds to a full GPU, within what the clock holds (a century).
    constexpr std::int64_t kCentury = std::int64_t{100} * 365 * 24 * 3600;
    if (**to_full < -kCentury || **to_full > kCentury)
      return Status::InvalidArgument(fmt::format("{}: bad \"time_to_full_s\"", at));
    e.time_to_full = std::chrono::seconds(**to_full);
  }
  return std::optional<Event>(std::move(e));
}

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
  auto pid = Optional<std::uint32_t>(j, "pid", at);
  if (!pid) return pid.error();
  f.pid = *pid;
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
  JsonMembers m;
  const std::string schema = m.Text(j, "", "schema");
  if (!m.error().empty()) return Checked(m, where);
  if (schema != "gpuwatch.jsonl/1") {
    return Status::InvalidArgument(
        fmt::format("{}: schema \"{}\", expected gpuwatch.jsonl/1", where, schema));
  }
  r.info.demo = m.Flag(j, "", "demo", false);
  r.hostname = m.Text(j, "", "hostname");
  ReadFields(m.Object(j, "", "host"), "host", json::object(), "", m, r.host);
  const json& devices = m.Array(j, "", "devices");
  // Every header adds its GPUs (a file recorded twice holds two).
  if (r.facts.size() + devices.size() > static_cast<std::size_t>(kMaxRecordedGpus))
    return TooMany(where, "GPUs", r.facts.size() + devices.size(), kMaxRecordedGpus);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const std::string at = JsonMembers::Path("", "devices", i);
    DeviceFields f;
    if (!devices[i].is_object()) {
      m.Wrong(at, "an object", devices[i]);
    } else {
      ReadFields(m.Object(devices[i], at, "fields"), JsonMembers::Path(at, "fields"),
                 m.Object(devices[i], at, "unavailable"), JsonMembers::Path(at, "unavailable"), m,
                 f);
    }
    r.facts.push_back(std::move(f));
  }
  r.host[FieldId::kDeviceCount] = Reading::Number(static_cast<double>(r.facts.size()));
  return Checked(m, where);
}

Result<RecordedSample> ReadSample(const json& j, const std::string& where) {
  const auto time = TimeOf(j);
  if (!time) return Status::InvalidArgument(fmt::format("{}: bad \"time\"", where));
  JsonMembers m;
  RecordedSample s;
  s.time = *time;
  const json& devices = m.Array(j, "", "devices");
  if (devices.size() > static_cast<std::size_t>(kMaxRecordedGpus))
    return TooMany(where, "GPUs", devices.size(), kMaxRecordedGpus);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const std::string at = JsonMembers::Path("", "devices", i);
    const json& d = devices[i];
    if (!d.is_object()) {
      m.Wrong(at, "an object", d);
      continue;
    }
    DeviceSample ds;
    ds.index = m.Integer<int>(d, at, "index", 0, kMaxRecordedGpus - 1).value_or(0);
    ds.health = HealthFrom(m.Text(d, at, "health", "ok"));
    ds.health_detail = m.Text(d, at, "health_detail");
    ReadFields(m.Object(d, at, "fields"), JsonMembers::Path(at, "fields"),
               m.Object(d, at, "unavailable"), JsonMembers::Path(at, "unavailable"), m, ds.fields);
    const json& processes = m.Array(d, at, "processes");
    if (processes.size() > kMaxRecordedProcesses) {
      return TooMany(fmt::format("{}: {}", where, at), "processes", processes.size(),
                     kMaxRecordedProcesses);
    }
    for (std::size_t k = 0; k < processes.size(); ++k) {
      const std::string pat = JsonMembers::Path(at, "processes", k);
      if (!processes[k].is_object()) {
        m.Wrong(pat, "an object", processes[k]);
        continue;
      }
      ds.processes.push_back(ReadProcess(processes[k], pat, m));
    }
    s.devices.push_back(std::move(ds));
  }
  if (Status st = Checked(m, where); !st.ok()) return st;
  return s;
}

}  // namespace gpuwatch::replay::jsonl
