#include "host/process_resolver.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <string>
#include <system_error>
#include <utility>

#include "host/proc_files.h"
#include "host/proc_parse.h"

namespace gpuwatch::host {
namespace {

using Visibility = HostProcess::Visibility;

double TicksPerSecond() {
  long ticks = ::sysconf(_SC_CLK_TCK);
  return ticks > 0 ? static_cast<double>(ticks) : 100.0;
}

std::filesystem::path ChoosePasswd(const ProcOptions& o, bool* use_nss) {
  *use_nss = false;
  if (!o.passwd_file.empty()) return o.passwd_file;
  std::filesystem::path host = (o.proc_dir / ".." / "etc" / "passwd").lexically_normal();
  std::error_code ec;
  if (std::filesystem::exists(host, ec)) {
    *use_nss = host == "/etc/passwd" && !o.is_host_proc;
    return host;
  }
  *use_nss = !o.is_host_proc;
  return "/etc/passwd";
}

UserTable MakeUsers(const ProcOptions& o) {
  bool use_nss = false;
  std::filesystem::path passwd = ChoosePasswd(o, &use_nss);
  return UserTable(std::move(passwd), use_nss);
}

EnvironmentProbe ProbeOf(const ProcOptions& o) {
  EnvironmentProbe probe;
  probe.proc_dir = o.proc_dir;
  probe.root_dir = o.root_dir;
  if (const char* k8s = std::getenv("KUBERNETES_SERVICE_HOST")) probe.kubernetes_service_host = k8s;
  return probe;
}

void SetAbsent(ProcessSample& p, Missing why, const std::string& detail) {
  p.fields[FieldId::kProcessRssBytes] = Reading::Absent(why, detail);
  p.fields[FieldId::kProcessCpuRatio] = Reading::Absent(why, detail);
}

// The process could not be read at all: exited, or refused.
void MarkUnreadable(ProcessSample& p, const Status& why) {
  p.host = HostProcess{};
  if (why.code() == Status::Code::kPermissionDenied) {
    p.host.visibility = Visibility::kNoPermission;
    SetAbsent(p, Missing::kNoPermission, "pid " + std::to_string(p.pid) + ": " + why.message());
  } else if (why.code() == Status::Code::kNotFound) {
    p.host.visibility = Visibility::kExited;
    SetAbsent(p, Missing::kNotSupported, "pid " + std::to_string(p.pid) + " exited");
  } else {
    p.host.visibility = Visibility::kExited;
    SetAbsent(p, Missing::kFailed, "pid " + std::to_string(p.pid) + ": " + why.message());
  }
}

Reading RssFromStatus(const StatusInfo& info, std::uint32_t pid) {
  if (info.rss_kb) return Reading::Number(static_cast<double>(*info.rss_kb) * 1024.0);
  return Reading::Absent(Missing::kNotSupported, "no VmRSS in /proc/" + std::to_string(pid) +
                                                     "/status (zombie or kernel thread)");
}

Reading AbsentFrom(const Status& why, std::string_view what) {
  Missing m = why.code() == Status::Code::kPermissionDenied ? Missing::kNoPermission
                                                            : Missing::kNotSupported;
  return Reading::Absent(m, std::string(what) + ": " + why.message());
}

}  // namespace

ProcessResolver::ProcessResolver(ProcOptions options)
    : options_(std::move(options)),
      env_(DetectEnvironment(ProbeOf(options_))),
      pids_not_ours_(env_.own_pid_namespace && !options_.is_host_proc),
      ticks_per_second_(TicksPerSecond()),
      page_size_(std::max(::sysconf(_SC_PAGESIZE), 1L)),
      users_(MakeUsers(options_)),
      pods_(options_.kubelet_log_dir.empty()
                ? (options_.proc_dir / ".." / "var" / "log" / "containers").lexically_normal()
                : options_.kubelet_log_dir),
      cpu_(ticks_per_second_) {}

void ProcessResolver::Resolve(ProcessSample& p) {
  try {
    ResolveOrThrow(p);
  } catch (const std::exception& e) {
    p.host = HostProcess{};
    p.host.visibility = Visibility::kExited;
    SetAbsent(p, Missing::kFailed, std::string("reading /proc failed: ") + e.what());
  }
}

void ProcessResolver::EndSample() {
  cpu_.EndSample();
  // Every process resolved is measured: what the meter forgot was not seen.
  std::erase_if(known_, [&](const auto& entry) { return !cpu_.Has(entry.first); });
  sample_uptime_.reset();
}

std::optional<double> ProcessResolver::ProcUptime() {
  if (!sample_uptime_) {
    Result<std::string> text = ReadWholeFile(options_.proc_dir / "uptime");
    sample_uptime_ = text ? ParseUptime(*text) : std::nullopt;
  }
  return *sample_uptime_;
}

std::optional<std::int64_t> ProcessResolver::BootTime() {
  if (!boot_time_s_) {
    if (Result<std::string> text = ReadWholeFile(options_.proc_dir / "stat")) {
      boot_time_s_ = ParseBootTime(*text);
    }
  }
  return boot_time_s_;
}

std::optional<double> ProcessResolver::SecondsSinceStart(std::uint64_t start_ticks) {
  std::optional<double> uptime = ProcUptime();
  if (!uptime) return std::nullopt;
  // uptime and start time both have tick resolution: a process started in the
  // current tick is taken to have lived one tick, not zero or less.
  return std::max(*uptime - static_cast<double>(start_ticks) / ticks_per_second_,
                  1.0 / ticks_per_second_);
}

// Reads what identifies the process beyond its stat: command line, user
// (and its RSS, from the same status file), cgroup and pod. False when the
// process turned out to be gone (`p` says so). `whole`: every file was read
// and the command line was not empty (a process caught before its exec).
bool ProcessResolver::ReadIdentity(const ProcDir& dir, const StatInfo& stat, ProcessSample& p,
                                   bool* whole) {
  Result<std::string> cmdline = dir.Read("cmdline");
  Result<std::string> status_text = dir.Read("status");
  Result<std::string> cgroup = dir.Read("cgroup");
  bool vanished = (!cmdline && cmdline.error().code() == Status::Code::kNotFound) ||
                  (!status_text && status_text.error().code() == Status::Code::kNotFound) ||
                  (!cgroup && cgroup.error().code() == Status::Code::kNotFound);
  if (vanished) {
    // A file missing: the process exited midway, or a sparse fixture tree.
    Result<std::string> again = dir.Read("stat");
    if (!again) {
      MarkUnreadable(p, again.error());
      return false;
    }
  }

  *whole = cmdline && !cmdline->empty() && status_text && cgroup;
  HostProcess& h = p.host;
  h.visibility = Visibility::kVisible;
  h.name = stat.comm;
  h.command = CommandLine(cmdline ? std::string_view(*cmdline) : std::string_view(), stat.comm);
  h.start_ticks = stat.start_ticks;
  if (std::optional<std::int64_t> boot = BootTime()) {
    auto since_boot =
        std::chrono::duration<double>(static_cast<double>(stat.start_ticks) / ticks_per_second_);
    h.start_time = std::chrono::system_clock::time_point(std::chrono::seconds(*boot)) +
                   std::chrono::duration_cast<std::chrono::system_clock::duration>(since_boot);
  }

  if (status_text) {
    StatusInfo info = ParseStatus(*status_text);
    h.uid = info.uid;
    if (info.uid) h.user = users_.Name(*info.uid);
    p.fields[FieldId::kProcessRssBytes] = RssFromStatus(info, p.pid);
  } else {
    p.fields[FieldId::kProcessRssBytes] = AbsentFrom(status_text.error(), "status");
  }

  if (cgroup) {
    CgroupIdentity id = ParseCgroup(*cgroup);
    h.container_id = std::move(id.container_id);
    h.container_runtime = std::move(id.container_runtime);
    h.pod_uid = std::move(id.pod_uid);
    h.slurm_job_id = std::move(id.slurm_job_id);
    FindPod(h);
  }
  return true;
}

// The pod of a container, once the kubelet has linked its log: a miss costs a stat().
void ProcessResolver::FindPod(HostProcess& h) {
  if (h.container_id.empty() || !h.pod.empty()) return;
  if (auto pod = pods_.Find(h.container_id)) {
    h.pod = std::move(pod->pod);
    h.pod_namespace = std::move(pod->namespace_);
    h.container_name = std::move(pod->container);
  }
}

void ProcessResolver::ResolveOrThrow(ProcessSample& p) {
  p.host = HostProcess{};
  if (pids_not_ours_) {
    // A local /proc/<pid> with this number is some other process: never look.
    p.host.visibility = Visibility::kOtherPidNs;
    SetAbsent(p, Missing::kNotSupported,
              "host pid " + std::to_string(p.pid) +
                  " is not visible here: gpuwatch runs in its own PID namespace "
                  "(run it with --pid=host, or mount the host /proc and pass --host-proc)");
    return;
  }

  Result<ProcDir> dir = ProcDir::Open(options_.proc_dir / std::to_string(p.pid));
  if (!dir) return MarkUnreadable(p, dir.error());
  Result<std::string> stat_text = dir->Read("stat");
  if (!stat_text) return MarkUnreadable(p, stat_text.error());
  std::optional<StatInfo> stat = ParseStat(*stat_text);
  if (!stat) {
    return MarkUnreadable(
        p, Status::Internal("cannot parse /proc/" + std::to_string(p.pid) + "/stat"));
  }

  // Every later read goes through the same handle: if the process exits
  // meanwhile, they fail rather than read a successor with the same pid.
  const CpuMeter::Key key{p.pid, stat->start_ticks};
  const auto steady =
      options_.steady_now ? options_.steady_now() : std::chrono::steady_clock::now();
  auto known = known_.find(key);
  if (known != known_.end() && known->second.whole && known->second.host.name == stat->comm &&
      steady - known->second.read_at < kIdentityRefresh) {
    FindPod(known->second.host);  // a container seen before its pod was listed
    p.host = known->second.host;
    Result<std::string> statm = dir->Read("statm");
    std::optional<std::uint64_t> pages = statm ? ParseStatmResidentPages(*statm) : std::nullopt;
    if (pages) {
      p.fields[FieldId::kProcessRssBytes] =
          Reading::Number(static_cast<double>(*pages) * static_cast<double>(page_size_));
    } else if (Result<std::string> status_text = dir->Read("status")) {
      // A zombie (statm all 0), or a tree without statm.
      p.fields[FieldId::kProcessRssBytes] = RssFromStatus(ParseStatus(*status_text), p.pid);
    } else {
      // Gone since its stat was read, or a tree without either file.
      Result<std::string> again = dir->Read("stat");
      if (!again) return MarkUnreadable(p, again.error());
      p.fields[FieldId::kProcessRssBytes] = AbsentFrom(status_text.error(), "status");
    }
  } else {
    bool whole = false;
    if (!ReadIdentity(*dir, *stat, p, &whole)) return;
    known_.insert_or_assign(key, Known{p.host, steady, whole});
  }

  std::optional<double> since_start;
  if (!cpu_.Has(key)) since_start = SecondsSinceStart(stat->start_ticks);
  // Elapsed time between samples is read on the tree's own clock (/proc/uptime):
  // the same as a steady clock on a live system, and still on a static tree.
  auto now = std::chrono::steady_clock::now();
  if (options_.steady_now) {
    now = options_.steady_now();
  } else if (std::optional<double> uptime = ProcUptime()) {
    now = std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(*uptime)));
  }
  std::optional<double> ratio =
      cpu_.Update(key, stat->utime_ticks + stat->stime_ticks, now, since_start);
  p.fields[FieldId::kProcessCpuRatio] =
      ratio ? Reading::Number(*ratio)
            : Reading::Absent(
                  Missing::kNotSupported,
                  "no CPU average yet: " + (options_.proc_dir / "uptime").string() + " unreadable");
}

}  // namespace gpuwatch::host
