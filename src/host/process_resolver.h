// Host attribution: who a GPU process is. Reads a /proc tree (the local one,
// a mounted host /proc, or a test fixture) and fills HostProcess plus the
// process's RSS and CPU readings. Not thread-safe: one owner (the sampler).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "gpuwatch/snapshot.h"
#include "gpuwatch/status.h"
#include "host/cgroup.h"
#include "host/cpu_meter.h"
#include "host/environment.h"
#include "host/kube_pods.h"
#include "host/users.h"

namespace gpuwatch::host {

class ProcDir;
struct StatInfo;

struct ProcOptions {
  // The /proc to read. "/proc" normally; `--host-proc DIR` for a mounted host
  // /proc, or a fixture tree in tests.
  std::filesystem::path proc_dir = "/proc";
  // True when proc_dir is the host's /proc (NVML's PIDs are its PIDs), as with
  // --host-proc. When false, proc_dir/self/status's NSpid tells whether we are
  // in a child PID namespace, where NVML's host PIDs mean nothing locally.
  bool is_host_proc = false;
  // passwd file for uid -> user name. Empty: proc_dir/../etc/passwd when that
  // exists (a mounted host root), else /etc/passwd (then also the C library's
  // NSS, for LDAP/SSSD users).
  std::filesystem::path passwd_file;
  // gpuwatch's own root, where /.dockerenv and /run/.containerenv are looked
  // for (environment()). Tests point it at a fixture.
  std::filesystem::path root_dir = "/";
  // The kubelet's log links, for pod, namespace and container names. Empty:
  // proc_dir/../var/log/containers (/var/log/containers, or a mounted host
  // root's).
  std::filesystem::path kubelet_log_dir;
  // The clock CPU ratios are measured with. Empty: steady_clock::now. Tests
  // inject a fake one.
  std::function<std::chrono::steady_clock::time_point()> steady_now;
};

class ProcessResolver {
 public:
  // Detects the environment once (proc_dir/self, root_dir markers,
  // $KUBERNETES_SERVICE_HOST). Reads nothing else until Resolve.
  explicit ProcessResolver(ProcOptions options);

  // Fills `p.host` and the kProcessRssBytes / kProcessCpuRatio readings of
  // `p.fields` for the NVML-reported `p.pid`. Never drops a process: when the
  // pid is in another namespace, exited or unreadable, `p.host.visibility`
  // says so and the readings are Absent with the reason. CPU ratio (1.0 = one
  // core) is measured between two calls for the same (pid, start time); on the
  // first sight it is the average since start. A process listed on several
  // GPUs may be resolved several times per sample. Never throws.
  void Resolve(ProcessSample& p);

  // Forget processes not seen since the last call (keeps memory bounded).
  // Call once after each sample's Resolve calls.
  void EndSample();

  // A process's user, command line and cgroup (three files, status the
  // kernel's dearest to write) are read when it is first seen, after an exec
  // (its comm changes) and then every kIdentityRefresh; every Resolve reads
  // stat (CPU, identity) and statm (RSS).
  static constexpr std::chrono::seconds kIdentityRefresh{10};

  const Environment& environment() const { return env_; }
  // True when NVML's PIDs cannot be looked up in proc_dir (child PID namespace
  // and no --host-proc): every process then resolves as kOtherPidNs.
  bool pids_in_other_namespace() const { return pids_not_ours_; }
  const ProcOptions& options() const { return options_; }

 private:
  void ResolveOrThrow(ProcessSample& p);
  bool ReadIdentity(const ProcDir& dir, const StatInfo& stat, ProcessSample& p, bool* whole);
  void FindPod(HostProcess& h);
  std::optional<std::int64_t> BootTime();
  std::optional<double> SecondsSinceStart(std::uint64_t start_ticks);

  ProcOptions options_;
  Environment env_;
  bool pids_not_ours_ = false;
  double ticks_per_second_;
  long page_size_;
  std::optional<std::int64_t> boot_time_s_;  // cached once read
  // The /proc tree's own clock (uptime, s), read once per sample: CPU ratios
  // are measured on it, so a static tree (the demo) keeps its figures.
  std::optional<double> ProcUptime();
  std::optional<std::optional<double>> sample_uptime_;  // cleared by EndSample
  UserTable users_;
  KubePods pods_;
  CpuMeter cpu_;
  // What was read of each process beyond stat and statm (kIdentityRefresh).
  struct Known {
    HostProcess host;
    std::chrono::steady_clock::time_point read_at;
    bool whole = false;  // every file read, a command line among them: else read again
  };
  std::map<CpuMeter::Key, Known> known_;
};

}  // namespace gpuwatch::host
