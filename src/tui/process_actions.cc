#include "tui/process_actions.h"

#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "host/proc_files.h"
#include "host/proc_parse.h"
#include "host/process_tree.h"

namespace gpuwatch::tui {
namespace {

std::filesystem::path PidDir(const std::filesystem::path& proc_dir, std::uint32_t pid) {
  return proc_dir / std::to_string(pid);
}

// A pidfd pins the process: a signal through it never reaches a later
// holder of the pid. -1 where the kernel has no pidfd_open (before 5.3).
int PinProcess(std::uint32_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

int SignalPinned(int pidfd, std::uint32_t pid, int signal) {
#ifdef SYS_pidfd_send_signal
  if (pidfd >= 0)
    return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0));
#endif
  (void)pidfd;
  return kill(static_cast<pid_t>(pid), signal);
}

}  // namespace

Families ReadFamilies(const std::filesystem::path& proc_dir) {
  Families f;
  f.parents = host::ReadParents(proc_dir);
  f.name_of = [proc_dir](std::uint32_t pid) -> std::string {
    auto dir = host::ProcDir::Open(PidDir(proc_dir, pid));
    if (!dir) return "";
    auto cmdline = dir->Read("cmdline");
    auto stat = dir->Read("stat");
    const auto info = stat ? host::ParseStat(*stat) : std::nullopt;
    return host::CommandLine(cmdline ? *cmdline : "", info ? info->comm : "");
  };
  return f;
}

ProcessDetails ReadDetails(const std::filesystem::path& proc_dir, const ProcessKey& key,
                           std::uint32_t uid) {
  ProcessDetails d;
  auto dir = host::ProcDir::Open(PidDir(proc_dir, key.pid));
  if (!dir) {
    d.environment_refused = fmt::format("pid {}: {}", key.pid, dir.error().message());
    return d;
  }
  if (auto cgroup = dir->Read("cgroup")) {
    d.cgroup = *cgroup;
    std::replace(d.cgroup.begin(), d.cgroup.end(), '\n', ' ');
    while (!d.cgroup.empty() && d.cgroup.back() == ' ') d.cgroup.pop_back();
  }
  auto status = dir->Read("status");
  const auto owner = status ? host::ParseStatus(*status).uid : std::nullopt;
  if (!owner || *owner != uid) {
    d.environment_refused = fmt::format(
        "pid {} is not your process: its environment is shown to its owner only", key.pid);
    return d;
  }
  auto environ = dir->Read("environ");
  if (!environ) {
    d.environment_refused = fmt::format("pid {}: {}", key.pid, environ.error().message());
    return d;
  }
  std::string_view rest = *environ;
  while (!rest.empty()) {
    const auto nul = rest.find('\0');
    std::string_view entry = rest.substr(0, nul);
    if (!entry.empty()) d.environment.emplace_back(entry);
    if (nul == std::string_view::npos) break;
    rest.remove_prefix(nul + 1);
  }
  std::sort(d.environment.begin(), d.environment.end());
  return d;
}

Status SendSignal(const std::filesystem::path& proc_dir, const ProcessKey& key, int signal) {
  const int pidfd = PinProcess(key.pid);
  if (pidfd < 0 && errno == ESRCH)
    return Status::NotFound(fmt::format("pid {} has exited", key.pid));
  // With the pid pinned, its start time says whether it is still the process shown.
  auto stat = host::ReadWholeFile(PidDir(proc_dir, key.pid) / "stat");
  const auto info = stat ? host::ParseStat(*stat) : std::nullopt;
  Status result = Status::Ok();
  if (!info) {
    result = Status::NotFound(fmt::format("pid {} has exited", key.pid));
  } else if (key.start_ticks != 0 && info->start_ticks != key.start_ticks) {
    result = Status::Unavailable(fmt::format(
        "pid {} is now another process (the one shown has exited): nothing sent", key.pid));
  } else if (SignalPinned(pidfd, key.pid, signal) != 0) {
    const int err = errno;
    result = err == EPERM ? Status::PermissionDenied(fmt::format("pid {}: not permitted", key.pid))
             : err == ESRCH
                 ? Status::NotFound(fmt::format("pid {} has exited", key.pid))
                 : Status::Unavailable(fmt::format("pid {}: {}", key.pid, std::strerror(err)));
  }
  if (pidfd >= 0) close(pidfd);
  return result;
}

}  // namespace gpuwatch::tui
