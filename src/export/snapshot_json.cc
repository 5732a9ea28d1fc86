#include "export/snapshot_json.h"

#include <cmath>
#include <cstdint>

#include "core/time_text.h"

namespace gpuwatch {
namespace {

using nlohmann::json;

template <Scope S>
void PutFields(const FieldArray<S>& fields, json& values, json& unavailable) {
  const FieldRange r = RangeOf(S);
  for (std::size_t i = r.first; i < r.first + r.count; ++i) {
    const auto id = static_cast<FieldId>(i);
    const Reading& v = fields[id];
    const std::string key(Info(id).key);
    if (v.is_number()) {
      const double x = v.number();
      // Integral values print as integers (bytes, counts, indices).
      if (std::floor(x) == x && std::fabs(x) < 9e15)
        values[key] = static_cast<std::int64_t>(x);
      else
        values[key] = x;
    } else if (v.is_text()) {
      values[key] = v.text();
    } else {
      values[key] = nullptr;
      json why = {{"reason", MissingName(v.missing())}};
      if (!v.detail().empty()) why["detail"] = v.detail();
      unavailable[key] = std::move(why);
    }
  }
}

}  // namespace

json ProcessToJson(const ProcessSample& p) {
  json values = json::object(), unavailable = json::object();
  PutFields(p.fields, values, unavailable);
  const HostProcess& h = p.host;
  json j = {
      {"pid", p.pid},
      {"type", ProcessTypeName(p.type)},
      {"gpu_instance_id", p.gpu_instance_id ? json(*p.gpu_instance_id) : json(nullptr)},
      {"compute_instance_id", p.compute_instance_id ? json(*p.compute_instance_id) : json(nullptr)},
      {"visibility", VisibilityName(h.visibility)},
      {"name", h.name},
      {"command", h.command},
      {"user", h.user},
      {"uid", h.uid ? json(*h.uid) : json(nullptr)},
      {"start_time", h.start_time ? json(Rfc3339(*h.start_time)) : json(nullptr)},
      {"container_id", h.container_id},
      {"container_runtime", h.container_runtime},
      {"pod_uid", h.pod_uid},
      {"pod", h.pod},
      {"namespace", h.pod_namespace},
      {"container", h.container_name},
      {"slurm_job_id", h.slurm_job_id},
      {"fields", std::move(values)},
      {"unavailable", std::move(unavailable)}};
  return j;
}

json DeviceToJson(const DeviceSample& d) {
  json values = json::object(), unavailable = json::object();
  PutFields(d.fields, values, unavailable);
  json procs = json::array();
  for (const auto& p : d.processes) procs.push_back(ProcessToJson(p));
  json j = {{"index", d.index},
            {"health", HealthName(d.health)},
            {"health_detail", d.health_detail},
            {"fields", std::move(values)},
            {"unavailable", std::move(unavailable)},
            {"processes", std::move(procs)}};
  if (d.mig_index) {
    j["mig_index"] = *d.mig_index;
    j["gpu_instance_id"] = d.gpu_instance_id ? json(*d.gpu_instance_id) : json(nullptr);
    j["compute_instance_id"] = d.compute_instance_id ? json(*d.compute_instance_id) : json(nullptr);
  }
  return j;
}

json SnapshotToJson(const Snapshot& s, const std::string& hostname) {
  json host_values = json::object(), host_unavailable = json::object();
  PutFields(s.host, host_values, host_unavailable);
  json devices = json::array();
  for (const auto& d : s.devices) {
    json dj = DeviceToJson(d);
    json migs = json::array();
    for (const auto& m : s.mig_devices) {
      if (m.index == d.index) migs.push_back(DeviceToJson(m));
    }
    dj["mig_devices"] = std::move(migs);
    devices.push_back(std::move(dj));
  }
  return json{
      {"schema", kSnapshotSchema},
      {"time", Rfc3339(s.time)},
      {"demo", s.demo},
      {"source", s.source},
      {"hostname", hostname},
      {"host", {{"fields", std::move(host_values)}, {"unavailable", std::move(host_unavailable)}}},
      {"devices", std::move(devices)}};
}

}  // namespace gpuwatch
