#include "engine/doctor.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <system_error>

namespace gpuwatch::engine {
namespace {

using Level = Finding::Level;

std::string Text(const Reading& r) {
  if (r.is_text()) return r.text();
  if (r.is_number()) return fmt::format("{}", r.number());
  return "N/A";
}

// Each field of `d` that could not be read, grouped by why; `what` without
// the GPU's name (CheckDevices puts it in front).
void CheckFields(const DeviceSample& d, std::vector<Finding>& out) {
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
  if (by_reason.empty()) out.push_back({Level::kOk, "every field readable", ""});
  for (const auto& [why, keys] : by_reason) {
    std::string list;
    for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
    const std::string line = fmt::format("{}: {}", list, why);
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

// One GPU's findings, `what` without its name.
std::vector<Finding> CheckDevice(const Snapshot& snap, const DeviceSample& d) {
  std::vector<Finding> out;
  if (d.health == DeviceHealth::kLost) {
    out.push_back({Level::kProblem, fmt::format("lost: {}", d.health_detail),
                   "the GPU fell off the bus (see `dmesg` for Xid 79); it needs a reset or a "
                   "reboot. gpuwatch keeps re-probing it."});
    return out;
  }
  const Reading& persistence = d.fields[FieldId::kPersistenceMode];
  if (persistence.is_number() && persistence.number() == 0) {
    out.push_back({Level::kWarning, "persistence mode is off",
                   "each NVML start then re-initialises the GPU (slow first queries); an "
                   "administrator can enable nvidia-persistenced"});
  }
  const Reading& mig = d.fields[FieldId::kMigMode];
  if (mig.is_number() && mig.number() == 1) {
    std::size_t n = 0;
    for (const auto& m : snap.mig_devices) n += m.index == d.index ? 1 : 0;
    out.push_back(
        {Level::kOk,
         fmt::format("MIG enabled, {} instance(s); utilization is per instance only through DCGM",
                     n),
         ""});
  }
  CheckFields(d, out);
  return out;
}

// "0-3, 6": indices in order, runs of three or more as ranges.
std::string IndexList(const std::vector<int>& indices) {
  std::string out;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    if (j >= i + 2) {
      out += fmt::format("{}-{}", indices[i], indices[j]);
    } else {
      out += fmt::format("{}", indices[i]);
      if (j == i + 1) out += fmt::format(", {}", indices[j]);
    }
    i = j + 1;
  }
  return out;
}

}  // namespace

std::vector<Finding> CheckEnvironment(const host::Environment& env, const std::string& host_proc,
                                      bool have_driver) {
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
  if (!have_driver) {
    out.push_back({Level::kInfo,
                   env.own_pid_namespace
                       ? "own PID namespace: once the driver answers, GPU processes will need "
                         "--pid=host or --host-proc to be named"
                       : "PID namespace not checked: there is no driver to compare with",
                   ""});
  } else if (env.own_pid_namespace && host_proc.empty()) {
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

std::vector<Finding> CheckNoDriver(const host::Environment& env,
                                   const std::filesystem::path& dev_dir,
                                   const std::string& library_env) {
  std::vector<std::string> nodes;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dev_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("nvidia")) nodes.push_back((dev_dir / name).string());
  }
  std::sort(nodes.begin(), nodes.end());
  std::vector<Finding> out;
  if (nodes.empty()) {
    out.push_back(
        {Level::kProblem,
         fmt::format("no NVIDIA device nodes ({}/nvidia*): {}", dev_dir.string(),
                     env.in_container ? "the container was started without the GPUs"
                                      : "the NVIDIA kernel driver is not loaded"),
         env.in_container
             ? "install the NVIDIA Container Toolkit on the host and start the container with "
               "--gpus all (docker; podman: --device nvidia.com/gpu=all); on Kubernetes, the "
               "NVIDIA device plugin and a nvidia.com/gpu resource limit"
             : "install or load the driver (`modprobe nvidia`), then `nvidia-smi` should list "
               "the GPUs"});
  } else {
    std::string list;
    for (std::size_t i = 0; i < nodes.size() && i < 4; ++i) list += (i ? ", " : "") + nodes[i];
    if (nodes.size() > 4) list += fmt::format(" and {} more", nodes.size() - 4);
    out.push_back(
        {Level::kInfo, "NVIDIA device nodes present: " + list,
         env.in_container
             ? "the GPUs are passed in but NVML is not: the NVIDIA Container Toolkit mounts "
               "libnvidia-ml.so.1 with --gpus all (or NVIDIA_DRIVER_CAPABILITIES=utility)"
             : ""});
  }
  out.push_back(
      {Level::kInfo,
       library_env.empty() ? "GPUWATCH_NVML_LIBRARY is not set: the system's libnvidia-ml.so.1 was "
                             "looked for"
                           : "GPUWATCH_NVML_LIBRARY=" + library_env + " was tried",
       "a driver library in another place: GPUWATCH_NVML_LIBRARY=/path/to/libnvidia-ml.so.1"});
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
  // Findings alike (same model, level, words and advice) become one line,
  // in the order they first appear.
  struct Group {
    std::string model;
    Finding finding;
    std::vector<int> gpus;
  };
  std::vector<Group> groups;
  for (const auto& d : snap.devices) {
    const std::string model = Text(d.fields[FieldId::kName]);
    for (Finding& f : CheckDevice(snap, d)) {
      auto same = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
        return g.model == model && g.finding.level == f.level && g.finding.what == f.what &&
               g.finding.advice == f.advice;
      });
      if (same == groups.end()) {
        groups.push_back({model, std::move(f), {d.index}});
      } else {
        same->gpus.push_back(d.index);
      }
    }
  }
  std::vector<Finding> out;
  for (Group& g : groups) {
    const std::string gpus =
        g.gpus.size() == 1 ? fmt::format("GPU {}", g.gpus[0]) : "GPUs " + IndexList(g.gpus);
    g.finding.what = fmt::format("{} ({}): {}", gpus, g.model, g.finding.what);
    out.push_back(std::move(g.finding));
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
