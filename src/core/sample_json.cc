#include "core/sample_json.h"

namespace gpuwatch {

using nlohmann::json;

std::string_view HealthName(DeviceHealth h) {
  switch (h) {
    case DeviceHealth::kOk:
      return "ok";
    case DeviceHealth::kLost:
      return "lost";
    case DeviceHealth::kError:
      return "error";
    case DeviceHealth::kStale:
      return "stale";
  }
  return "error";
}

std::string_view VisibilityName(HostProcess::Visibility v) {
  switch (v) {
    case HostProcess::Visibility::kVisible:
      return "visible";
    case HostProcess::Visibility::kOtherPidNs:
      return "other_pid_namespace";
    case HostProcess::Visibility::kExited:
      return "exited";
    case HostProcess::Visibility::kNoPermission:
      return "no_permission";
  }
  return "exited";
}

std::string_view ProcessTypeName(ProcessSample::Type t) {
  switch (t) {
    case ProcessSample::Type::kCompute:
      return "compute";
    case ProcessSample::Type::kGraphics:
      return "graphics";
    case ProcessSample::Type::kComputeAndGraphics:
      return "compute+graphics";
  }
  return "compute";
}

template <Scope S>
void ReadFieldValues(const json& values, const std::string& values_at, JsonMembers& m,
                     FieldArray<S>& out) {
  for (const auto& item : values.items()) {
    const auto id = FindByKey(item.key());
    const json& v = item.value();
    if (!id || !FieldArray<S>::Holds(*id) || v.is_null()) continue;
    const bool text = Info(*id).unit == Unit::kText;
    if (text && v.is_string()) {
      out[*id] = Reading::Text(v.get<std::string>());
    } else if (!text && v.is_number()) {
      out[*id] = Reading::Number(v.get<double>());
    } else {
      m.Wrong(JsonMembers::Path(values_at, item.key()), text ? "text" : "a number", v);
    }
  }
}

template <Scope S>
void ReadFields(const json& owner, const std::string& at, JsonMembers& m, FieldArray<S>& out) {
  ReadFieldValues(m.Object(owner, at, "fields"), JsonMembers::Path(at, "fields"), m, out);
  const std::string why_at = JsonMembers::Path(at, "unavailable");
  for (const auto& item : m.Object(owner, at, "unavailable").items()) {
    const auto id = FindByKey(item.key());
    const json& why = item.value();
    if (!id || !FieldArray<S>::Holds(*id)) continue;
    const std::string path = JsonMembers::Path(why_at, item.key());
    std::string reason;
    std::string detail;
    if (why.is_object()) {
      reason = m.Text(why, path, "reason");
      detail = m.Text(why, path, "detail");
    } else if (why.is_string()) {
      reason = why.get<std::string>();
    } else if (!why.is_null()) {
      m.Wrong(path, "a reason (text or an object)", why);
    }
    out[*id] = Reading::Absent(MissingFromName(reason), detail);
  }
}

template void ReadFieldValues(const json&, const std::string&, JsonMembers&, HostFields&);
template void ReadFields(const json&, const std::string&, JsonMembers&, HostFields&);
template void ReadFields(const json&, const std::string&, JsonMembers&, DeviceFields&);
template void ReadFields(const json&, const std::string&, JsonMembers&, ProcessFields&);

ProcessSample ReadProcess(const json& j, const std::string& at, JsonMembers& m) {
  ProcessSample p;
  p.pid = m.Integer<std::uint32_t>(j, at, "pid").value_or(0);
  p.type =
      FromName(m.Text(j, at, "type"), ProcessSample::Type::kComputeAndGraphics, ProcessTypeName)
          .value_or(ProcessSample::Type::kCompute);
  p.gpu_instance_id = m.Integer<std::uint32_t>(j, at, "gpu_instance_id");
  p.compute_instance_id = m.Integer<std::uint32_t>(j, at, "compute_instance_id");
  HostProcess& h = p.host;
  h.visibility =
      FromName(m.Text(j, at, "visibility"), HostProcess::Visibility::kNoPermission, VisibilityName)
          .value_or(HostProcess::Visibility::kExited);
  h.name = m.Text(j, at, "name");
  h.command = m.Text(j, at, "command");
  h.user = m.Text(j, at, "user");
  h.uid = m.Integer<std::uint32_t>(j, at, "uid");
  h.start_ticks = m.Integer<std::uint64_t>(j, at, "start_ticks").value_or(0);
  h.start_time = m.Time(j, at, "start_time");
  h.container_id = m.Text(j, at, "container_id");
  h.container_runtime = m.Text(j, at, "container_runtime");
  h.pod_uid = m.Text(j, at, "pod_uid");
  h.pod = m.Text(j, at, "pod");
  h.pod_namespace = m.Text(j, at, "namespace");
  h.container_name = m.Text(j, at, "container");
  h.slurm_job_id = m.Text(j, at, "slurm_job_id");
  ReadFields(j, at, m, p.fields);
  return p;
}

void ReadProcesses(const json& device, const std::string& at, JsonMembers& m,
                   std::vector<ProcessSample>& out) {
  const json& processes = m.Array(device, at, "processes");
  for (std::size_t k = 0; k < processes.size(); ++k) {
    const std::string pat = JsonMembers::Path(at, "processes", k);
    if (!processes[k].is_object()) {
      m.Wrong(pat, "an object", processes[k]);
      continue;
    }
    out.push_back(ReadProcess(processes[k], pat, m));
  }
}

}  // namespace gpuwatch
