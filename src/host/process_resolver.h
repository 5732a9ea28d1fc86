// Host attribution: who a GPU process is. Reads a /proc tree (the local one,
// a mounted host /proc, or a test fixture) and fills HostProcess plus the
// process's RSS and CPU readings. Not thread-safe: one owner (the sampler).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "gpuwatch/snapshot.h"
#include "gpuwatch/status.h"

namespace gpuwatch::host {

struct ProcOptions {
  // The /proc to read. "/proc" normally; `--host-proc DIR` for a mounted host
  // /proc, or a fixture tree in tests.
  std::filesystem::path proc_dir = "/proc";
  // True when proc_dir is the host's /proc (NVML's PIDs are its PIDs), as with
  // --host-proc. When false, proc_dir/self/status's NSpid tells whether we are
  // in a child PID namespace, where NVML's host PIDs mean nothing locally.
  bool is_host_proc = false;
  // passwd file for uid -> user name. Empty: proc_dir/../etc/passwd when that
  // exists (a mounted host root), else /etc/passwd.
  std::filesystem::path passwd_file;
};

// What the environment looks like from inside (for `doctor` and the status
// header).
struct Environment {
  bool in_container = false;
  std::string container_runtime;  // docker, podman, containerd, cri-o, kubernetes
  bool own_pid_namespace = false; // NVML's PIDs are not ours
  int pid_namespace_depth = 1;    // entries on NSpid
};

// Container and job identity parsed from one /proc/<pid>/cgroup file.
struct CgroupIdentity {
  std::string container_id;
  std::string container_runtime;
  std::string pod_uid;
  std::string slurm_job_id;
};
CgroupIdentity ParseCgroup(std::string_view cgroup_file_text);

class ProcessResolver {
 public:
  explicit ProcessResolver(ProcOptions options);

  // Fills `p.host` and the kProcessRssBytes / kProcessCpuRatio readings of
  // `p.fields` for the NVML-reported `p.pid`. Never drops a process: when the
  // pid is in another namespace, exited or unreadable, `p.host.visibility`
  // says so. CPU ratio (1.0 = one core) is measured between two calls for the
  // same (pid, start time); on the first sight it is the average since start.
  void Resolve(ProcessSample& p);

  // Forget processes not seen since the last call (keeps memory bounded).
  void EndSample();

  const Environment& environment() const { return env_; }

 private:
  ProcOptions options_;
  Environment env_;
  // (pid, start ticks) -> (total cpu ticks, when read): CPU% between samples.
  struct CpuMark {
    std::uint64_t ticks = 0;
    std::chrono::steady_clock::time_point at;
    bool seen = false;
  };
  std::map<std::pair<std::uint32_t, std::uint64_t>, CpuMark> cpu_;
  std::map<std::uint32_t, std::string> users_;  // uid -> name cache
};

}  // namespace gpuwatch::host
