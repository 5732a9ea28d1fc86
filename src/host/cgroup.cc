#include "host/cgroup.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

namespace gpuwatch::host {
namespace {

constexpr std::size_t kContainerIdLength = 64;

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

bool IsContainerId(std::string_view s) { return s.size() == kContainerIdLength && IsHex(s); }

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    std::size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    if (!part.empty()) parts.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

// "<prefix><64 hex>[.scope]": the scope units systemd-managed runtimes create.
struct ScopePrefix {
  std::string_view prefix;
  std::string_view runtime;
};
constexpr std::array<ScopePrefix, 5> kScopePrefixes{{
    {"docker-", "docker"},
    {"cri-containerd-", "containerd"},
    {"crio-", "cri-o"},
    {"libpod-", "podman"},
    {"nerdctl-", "containerd"},
}};

// A container named by one path component (and the one before it), or
// nothing. conmon scopes ("crio-conmon-<id>", "libpod-conmon-<id>") are the
// runtime's monitor, not the container, and do not match: the prefix must be
// followed directly by 64 hex.
bool MatchContainer(std::string_view previous, std::string_view part, CgroupIdentity& out) {
  std::string_view stem = part;
  if (stem.ends_with(".scope")) stem.remove_suffix(6);
  for (const ScopePrefix& sp : kScopePrefixes) {
    if (stem.starts_with(sp.prefix) && IsContainerId(stem.substr(sp.prefix.size()))) {
      out.container_id = std::string(stem.substr(sp.prefix.size()));
      out.container_runtime = std::string(sp.runtime);
      return true;
    }
  }
  if (!IsContainerId(part)) return false;
  // cgroupfs drivers: "/docker/<id>", "/libpod_parent/.../<id>",
  // "/kubepods/<qos>/pod<uid>/<id>" (runtime not named).
  out.container_id = std::string(part);
  if (previous == "docker") {
    out.container_runtime = "docker";
  } else if (previous.starts_with("libpod")) {
    out.container_runtime = "podman";
  }
  return true;
}

// "pod<uid>" (cgroupfs) or "kubepods[-<qos>]-pod<uid_with_underscores>.slice"
// (systemd).
bool MatchPod(std::string_view part, CgroupIdentity& out) {
  std::string_view uid;
  if (part.starts_with("pod")) {
    uid = part.substr(3);
  } else if (part.starts_with("kubepods") && part.ends_with(".slice")) {
    std::size_t at = part.rfind("-pod");
    if (at == std::string_view::npos) return false;
    uid = part.substr(at + 4, part.size() - at - 4 - 6);
  } else {
    return false;
  }
  if (uid.size() < 32) return false;
  std::string normal(uid);
  std::replace(normal.begin(), normal.end(), '_', '-');
  bool ok = std::all_of(normal.begin(), normal.end(), [](char c) {
    return c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
  if (!ok) return false;
  out.pod_uid = std::move(normal);
  return true;
}

CgroupIdentity ParsePath(std::string_view path) {
  CgroupIdentity id;
  std::vector<std::string_view> parts = SplitPath(path);
  bool under_kubepods = false;
  bool under_slurm = false;
  std::string_view previous;
  for (std::string_view part : parts) {
    if (part.starts_with("kubepods")) under_kubepods = true;
    if (part.starts_with("slurm")) under_slurm = true;
    CgroupIdentity found;
    if (MatchContainer(previous, part, found)) {
      // Innermost container wins; a pod found above it stays.
      id.container_id = std::move(found.container_id);
      id.container_runtime = std::move(found.container_runtime);
    } else if (under_kubepods && MatchPod(part, found)) {
      id.pod_uid = std::move(found.pod_uid);
    } else if (under_slurm && part.starts_with("job_") && IsDigits(part.substr(4))) {
      id.slurm_job_id = std::string(part.substr(4));
    }
    previous = part;
  }
  return id;
}

std::string_view PathOfLine(std::string_view line) {
  // "hierarchy-id:controllers:path"; the path itself may hold ':'.
  std::size_t first = line.find(':');
  if (first == std::string_view::npos) return line;
  std::size_t second = line.find(':', first + 1);
  if (second == std::string_view::npos) return line;
  return line.substr(second + 1);
}

}  // namespace

CgroupIdentity ParseCgroup(std::string_view text) {
  CgroupIdentity result;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
      line.remove_suffix(1);
    }
    if (line.empty()) continue;
    CgroupIdentity id = ParsePath(PathOfLine(line));
    if (result.container_id.empty() && !id.container_id.empty()) {
      result.container_id = std::move(id.container_id);
      result.container_runtime = std::move(id.container_runtime);
    }
    if (result.pod_uid.empty()) result.pod_uid = std::move(id.pod_uid);
    if (result.slurm_job_id.empty()) result.slurm_job_id = std::move(id.slurm_job_id);
  }
  return result;
}

}  // namespace gpuwatch::host
