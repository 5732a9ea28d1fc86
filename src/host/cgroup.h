// Container, pod and batch-job identity from a /proc/<pid>/cgroup file.
// Pure: text in, identity out.
#pragma once

#include <string>
#include <string_view>

namespace gpuwatch::host {

// Empty strings mean "not found". `container_id` is the full 64-hex id;
// `container_runtime` is docker, containerd, cri-o or podman, or empty when
// the path names a container but not its runtime (a bare 64-hex leaf under
// /kubepods with the cgroupfs driver).
struct CgroupIdentity {
  std::string container_id;
  std::string container_runtime;
  std::string pod_uid;       // Kubernetes pod uid, with dashes
  std::string slurm_job_id;  // digits
  friend bool operator==(const CgroupIdentity&, const CgroupIdentity&) = default;
};

// Accepts cgroup v1 lines ("12:memory:/docker/<id>"), v2 lines
// ("0::/system.slice/docker-<id>.scope") and bare paths. When a path nests
// containers (kind: a pod inside a docker node), the innermost wins. Across the
// lines of a v1 file, the first line that names a container (or pod, or job)
// gives it.
CgroupIdentity ParseCgroup(std::string_view cgroup_file_text);

}  // namespace gpuwatch::host
