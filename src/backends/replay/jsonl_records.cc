#include "backends/replay/jsonl_records.h"

#include <fmt/format.h>

#include "core/json_members.h"
#include "core/sample_json.h"
#include "core/time_text.h"

namespace gpuwatch::replay::jsonl {
namespace {

using nlohmann::json;
using TimePoint = std::chrono::system_clock::time_point;

std::optional<TimePoint> TimeOf(const json& j) {
  const auto it = j.find("time");
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return ParseRfc3339(it->get_ref<const std::string&>());
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
  ReadFieldValues(m.Object(j, "", "host"), "host", m, r.host);
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
      ReadFields(devices[i], at, m, f);
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
    // "stale": the last values again, not analysed; a name this version does not know: ok.
    ds.health = FromName(m.Text(d, at, "health"), DeviceHealth::kStale, HealthName)
                    .value_or(DeviceHealth::kOk);
    ds.health_detail = m.Text(d, at, "health_detail");
    ReadFields(d, at, m, ds.fields);
    if (const std::size_t n = m.Array(d, at, "processes").size(); n > kMaxRecordedProcesses)
      return TooMany(fmt::format("{}: {}", where, at), "processes", n, kMaxRecordedProcesses);
    ReadProcesses(d, at, m, ds.processes);
    s.devices.push_back(std::move(ds));
  }
  if (Status st = Checked(m, where); !st.ok()) return st;
  return s;
}

}  // namespace gpuwatch::replay::jsonl
