// What gpuwatch's own environment looks like from inside: container or not,
// which runtime, whose PIDs NVML will report. For `gpuwatch doctor`, the
// status header, and the resolver's PID-namespace decision.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace gpuwatch::host {

struct Environment {
  bool in_container = false;
  std::string container_runtime;   // docker, podman, containerd, cri-o, kubernetes; "" unknown
  bool own_pid_namespace = false;  // in a child PID namespace: NVML's host PIDs are not ours
  int pid_namespace_depth = 1;     // entries on NSpid (1 when the kernel has no NSpid line)
  friend bool operator==(const Environment&, const Environment&) = default;
};

// Where DetectEnvironment looks. Tests point the paths at fixture trees.
struct EnvironmentProbe {
  std::filesystem::path proc_dir = "/proc";  // reads self/status, self/cgroup
  std::filesystem::path root_dir = "/";      // looks for .dockerenv, run/.containerenv
  std::string kubernetes_service_host;       // $KUBERNETES_SERVICE_HOST, "" when unset
};

// Signs of a container: /.dockerenv (docker), /run/.containerenv (podman),
// $KUBERNETES_SERVICE_HOST, or a container/pod in proc/self/cgroup. The runtime
// named by the cgroup wins over the marker files; "kubernetes" when only the
// environment variable (or a pod without a container id) says so.
//
// Limits: under a private cgroup namespace (docker's default on cgroup v2)
// self/cgroup reads "0::/" and only the marker files tell; a kernel without
// NSpid (before 4.1) reads as depth 1, so a child PID namespace goes unnoticed
// there.
Environment DetectEnvironment(const EnvironmentProbe& probe);

}  // namespace gpuwatch::host
