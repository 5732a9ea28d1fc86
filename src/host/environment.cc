#include "host/environment.h"

#include <system_error>

#include "host/cgroup.h"
#include "host/proc_files.h"
#include "host/proc_parse.h"

namespace gpuwatch::host {
namespace {

bool Exists(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::exists(p, ec);
}

}  // namespace

Environment DetectEnvironment(const EnvironmentProbe& probe) {
  Environment env;
  if (Result<std::string> status = ReadWholeFile(probe.proc_dir / "self" / "status")) {
    StatusInfo info = ParseStatus(*status);
    if (!info.nspid.empty()) env.pid_namespace_depth = static_cast<int>(info.nspid.size());
  }
  env.own_pid_namespace = env.pid_namespace_depth > 1;

  CgroupIdentity self;
  if (Result<std::string> cgroup = ReadWholeFile(probe.proc_dir / "self" / "cgroup")) {
    self = ParseCgroup(*cgroup);
  }
  bool podman_marker = Exists(probe.root_dir / "run" / ".containerenv");
  bool docker_marker = Exists(probe.root_dir / ".dockerenv");
  bool kubernetes = !probe.kubernetes_service_host.empty() || !self.pod_uid.empty();

  env.in_container = podman_marker || docker_marker || kubernetes || !self.container_id.empty();
  if (!self.container_runtime.empty()) {
    env.container_runtime = self.container_runtime;
  } else if (podman_marker) {
    env.container_runtime = "podman";
  } else if (docker_marker) {
    env.container_runtime = "docker";
  } else if (kubernetes) {
    env.container_runtime = "kubernetes";
  }
  return env;
}

}  // namespace gpuwatch::host
