#include "backends/replay/jsonl_replay.h"

#include <fmt/format.h>

#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

namespace gpuwatch::replay {
namespace {

using nlohmann::json;

// "2026-11-30T06:13:55.355Z" -> time point; nullopt when malformed.
std::optional<std::chrono::system_clock::time_point> ParseTime(const std::string& text) {
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return std::nullopt;
  int ms = 0;
  if (*rest == '.') {
    ms = std::atoi(rest + 1);
  }
  return std::chrono::system_clock::from_time_t(timegm(&tm)) + std::chrono::milliseconds(ms);
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

}  // namespace

Result<std::unique_ptr<ReplayBackend>> ReplayBackend::Open(const ReplayOptions& options) {
  std::ifstream in(options.path);
  if (!in) return Status::NotFound(fmt::format("cannot read the recording {}", options.path));
  std::unique_ptr<ReplayBackend> b(new ReplayBackend());
  b->options_ = options;
  b->info_.library_path = options.path;
  std::string line;
  int number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const auto where = fmt::format("{}:{}", options.path, number);
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return Status::InvalidArgument(
          fmt::format("{}: not a JSON object (is this a --jsonl recording?)", where));
    }
    const std::string type = j.value("type", "");
    if (type == "header") {
      if (j.value("schema", "") != "gpuwatch.jsonl/1") {
        return Status::InvalidArgument(fmt::format("{}: schema \"{}\", expected gpuwatch.jsonl/1",
                                                   where, j.value("schema", "")));
      }
      header = true;
      b->info_.demo = j.value("demo", false);
      ReadFields(j.value("host", json::object()), json::object(), b->host_);
      for (const auto& d : j.value("devices", json::array())) {
        DeviceFields f;
        ReadFields(d.value("fields", json::object()), json::object(), f);
        b->static_.push_back(std::move(f));
      }
      b->host_[FieldId::kDeviceCount] = Reading::Number(static_cast<double>(b->static_.size()));
    } else if (type == "sample") {
      if (!header)
        return Status::InvalidArgument(fmt::format("{}: a sample before the header line", where));
      const auto time = ParseTime(j.value("time", ""));
      if (!time) return Status::InvalidArgument(fmt::format("{}: bad \"time\"", where));
      Sample s;
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
      b->samples_.push_back(std::move(s));
    }  // events are not samples: the analysis derives them again
  }
  if (!header)
    return Status::InvalidArgument(
        fmt::format("{}: no header line (is this a --jsonl recording?)", options.path));
  if (b->samples_.empty())
    return Status::InvalidArgument(fmt::format("{}: no samples", options.path));
  return b;
}

void ReplayBackend::Advance() {
  if (!started_) {
    started_ = true;
    play_start_ = std::chrono::steady_clock::now();
    return;  // the first round shows the first sample
  }
  if (options_.speed <= 0) {
    if (cursor_ + 1 < samples_.size()) ++cursor_;
    return;
  }
  const auto elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - play_start_) *
      options_.speed;
  const auto target = samples_.front().time +
                      std::chrono::duration_cast<std::chrono::system_clock::duration>(elapsed);
  while (cursor_ + 1 < samples_.size() && samples_[cursor_ + 1].time <= target) ++cursor_;
}

void ReplayBackend::ReadDevice(int index, const FieldMask& which, bool processes,
                               DeviceSample& out) {
  if (index == 0) Advance();
  out.index = index;
  if (index < 0 || index >= DeviceCount()) {
    out.health = DeviceHealth::kError;
    out.health_detail = fmt::format("no GPU with index {} in the recording", index);
    return;
  }
  const DeviceFields& facts = static_[static_cast<std::size_t>(index)];
  const Sample& s = samples_[cursor_];
  const DeviceSample* recorded = nullptr;
  for (const auto& d : s.devices) {
    if (d.index == index) recorded = &d;
  }
  const FieldRange r = RangeOf(Scope::kDevice);
  for (std::size_t i = r.first; i < r.first + r.count; ++i) {
    const auto id = static_cast<FieldId>(i);
    if (!which.test(i)) continue;
    out.fields[id] = Info(id).cadence == Cadence::kStatic ? facts[id]
                     : recorded != nullptr
                         ? recorded->fields[id]
                         : Reading::Absent(Missing::kNotYetSampled, "not in the recording");
  }
  out.health = recorded != nullptr ? recorded->health : DeviceHealth::kOk;
  out.health_detail = out.health == DeviceHealth::kLost ? "lost in the recording" : "";
  if (processes)
    out.processes = recorded != nullptr ? recorded->processes : std::vector<ProcessSample>{};
}

std::optional<std::chrono::system_clock::time_point> ReplayBackend::SampleTime() const {
  return samples_[cursor_].time;
}

bool ReplayBackend::Finished() const { return started_ && cursor_ + 1 >= samples_.size(); }

}  // namespace gpuwatch::replay
