#include "engine/doctor.h"

#include <fmt/format.h>

#include <map>

namespace gpuwatch::engine {
namespace {

using Level = Finding::Level;

std::string Text(const Reading& r) {
  if (r.is_text()) return r.text();
  if (r.is_number()) return fmt::format("{}", r.number());
  return "N/A";
}

// Each field of `d` that could not be read, grouped by why.
void CheckFields(const DeviceSample& d, const std::string& label, std::vector<Finding>& out) {
  std::map<std::string, std::vector<std::string>> by_reason;
  const FieldRange r = RangeOf(Scope::kDevice);
  for (std::size_t i = r.first; i < r.first + r.count; ++i) {
    const auto id = static_cast<FieldId>(i);
    const Reading& v = d.fields[id];
    if (v.ok()) continue;
    by_reason[std::string(MissingName(v.missing())) +
              (v.detail().empty() ? "" : " (" + v.detail() + ")")]
        .push_back(std::string(Info(id).key));
  }
  if (by_reason.empty()) out.push_back({Level::kOk, label + ": every field readable", ""});
  for (const auto& [why, keys] : by_reason) {
    std::string list;
    for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
    const std::string line = fmt::format("{}: {}: {}", label, list, why);
    if (why.starts_with("no_permission")) {
      out.push_back({Level::kWarning, line,
                     "run gpuwatch as root or as a user allowed by the driver "
                     "(NVreg_RestrictProfilingToAdminUsers)"});
    } else if (why.starts_with("not_supported")) {
      out.push_back({Level::kInfo, line + " — this GPU does not offer it; shown as N/A", ""});
    } else {
      out.push_back({Level::kWarning, line, ""});
    }
  }
}

}  // namespace

std::vector<Finding> CheckEnvironment(const host::Environment& env, const std::string& host_proc) {
  std::vector<Finding> out;
  if (env.in_container) {
    out.push_back(
        {Level::kOk,
         fmt::format("running in a container ({})",
                     env.container_runtime.empty() ? "unknown runtime" : env.container_runtime),
         ""});
  } else {
    out.push_back({Level::kOk, "running on the host (no container detected)", ""});
  }
  if (env.own_pid_namespace && host_proc.empty()) {
    out.push_back(
        {Level::kWarning,
         "gpuwatch is in its own PID namespace: NVML reports host PIDs, which are not visible here",
         "run the container with --pid=host (Kubernetes: hostPID: true), or mount the host's /proc "
         "and pass --host-proc /host/proc; until then processes show as \"host pid N, not visible "
         "here\""});
  } else {
    out.push_back({Level::kOk,
                   env.own_pid_namespace
                       ? "own PID namespace, reading the host /proc given by --host-proc"
                       : "same PID namespace as the driver: process PIDs resolve locally",
                   ""});
  }
  return out;
}

std::vector<Finding> CheckDriver(const BackendInfo& info, const Snapshot& snap) {
  std::vector<Finding> out;
  out.push_back({Level::kOk, "NVML library: " + info.library_path, ""});
  out.push_back(
      {Level::kOk,
       fmt::format("driver {}, CUDA {}, NVML {}", Text(snap.host[FieldId::kDriverVersion]),
                   Text(snap.host[FieldId::kCudaDriverVersion]),
                   Text(snap.host[FieldId::kNvmlVersion])),
       ""});
  if (!info.missing_symbols.empty()) {
    std::string names;
    for (const auto& s : info.missing_symbols) names += (names.empty() ? "" : ", ") + s;
    out.push_back({Level::kWarning,
                   fmt::format("this driver's NVML lacks {} entry point(s): {}",
                               info.missing_symbols.size(), names),
                   "gpuwatch falls back to older calls where there are some; the rest show as "
                   "N/A. A newer driver brings them."});
  }
  if (snap.devices.empty()) {
    out.push_back({Level::kProblem, "NVML reports no GPUs",
                   "check `nvidia-smi -L`; in a container, pass the GPUs (--gpus all)"});
  } else {
    out.push_back({Level::kOk, fmt::format("{} GPU(s)", snap.devices.size()), ""});
  }
  return out;
}

std::vector<Finding> CheckDevices(const Snapshot& snap) {
  std::vector<Finding> out;
  for (const auto& d : snap.devices) {
    const std::string label = fmt::format("GPU {} ({})", d.index, Text(d.fields[FieldId::kName]));
    if (d.health == DeviceHealth::kLost) {
      out.push_back({Level::kProblem, fmt::format("{}: lost: {}", label, d.health_detail),
                     "the GPU fell off the bus (see `dmesg` for Xid 79); it needs a reset or a "
                     "reboot. gpuwatch keeps re-probing it."});
      continue;
    }
    const Reading& persistence = d.fields[FieldId::kPersistenceMode];
    if (persistence.is_number() && persistence.number() == 0) {
      out.push_back({Level::kWarning, label + ": persistence mode is off",
                     "each NVML start then re-initialises the GPU (slow first queries); an "
                     "administrator can enable nvidia-persistenced"});
    }
    const Reading& mig = d.fields[FieldId::kMigMode];
    if (mig.is_number() && mig.number() == 1) {
      std::size_t n = 0;
      for (const auto& m : snap.mig_devices) n += m.index == d.index ? 1 : 0;
      out.push_back(
          {Level::kOk,
           fmt::format("{}: MIG enabled, {} instance(s); utilization is per instance only through "
                       "DCGM",
                       label, n),
           ""});
    }
    CheckFields(d, label, out);
  }
  return out;
}

std::vector<Finding> CheckProcessVisibility(const Snapshot& snap) {
  std::map<HostProcess::Visibility, int> by;
  int total = 0;
  for (const auto& d : snap.devices) {
    for (const auto& p : d.processes) {
      ++by[p.host.visibility];
      ++total;
    }
  }
  if (total == 0)
    return {{Level::kOk, "no GPU processes running now (process visibility not checked)", ""}};
  std::vector<Finding> out;
  if (by[HostProcess::Visibility::kVisible] == total) {
    out.push_back(
        {Level::kOk,
         fmt::format("{} GPU process(es), all attributed (user, command, container)", total), ""});
  }
  if (const int n = by[HostProcess::Visibility::kNoPermission]; n > 0) {
    out.push_back(
        {Level::kWarning,
         fmt::format("{} of {} GPU process(es) have /proc entries gpuwatch may not read", n, total),
         "run as root (or with CAP_SYS_PTRACE) to see other users' processes"});
  }
  if (const int n = by[HostProcess::Visibility::kOtherPidNs]; n > 0) {
    out.push_back({Level::kWarning,
                   fmt::format("{} of {} GPU process(es) are host PIDs not visible here", n, total),
                   "see the PID namespace advice above"});
  }
  if (const int n = by[HostProcess::Visibility::kExited]; n > 0) {
    out.push_back(
        {Level::kInfo,
         fmt::format("{} of {} GPU process(es) exited while being read (normal churn)", n, total),
         ""});
  }
  return out;
}

}  // namespace gpuwatch::engine
