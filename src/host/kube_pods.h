// Container id -> Kubernetes pod, namespace and container name, from the
// kubelet's log links on the node: /var/log/containers holds one entry per
// container, named <pod>_<namespace>_<container>-<container id>.log (the
// layout log collectors read). Only the names are read, never the logs or
// their targets. Not thread-safe: one owner.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gpuwatch::host {

struct PodRef {
  std::string pod;
  std::string namespace_;
  std::string container;
  friend bool operator==(const PodRef&, const PodRef&) = default;
};

// One directory entry's name, or nullopt when it is not a kubelet log link
// (pod, namespace and container names hold no '_'; the id is 64 hex digits).
// Gives the container id in `id`.
std::optional<PodRef> ParseKubeletLogName(std::string_view name, std::string& id);

class KubePods {
 public:
  explicit KubePods(std::filesystem::path dir);

  // The pod of a container id (64 hex digits, as cgroups give it), or nullopt.
  // The directory is listed on first use and again, on a miss, when its
  // mtime has changed (a pod started since): a miss costs one stat().
  std::optional<PodRef> Find(std::string_view container_id);

  const std::filesystem::path& dir() const { return dir_; }

 private:
  void ListIfChanged();

  std::filesystem::path dir_;
  bool listed_ = false;
  std::filesystem::file_time_type listed_mtime_{};
  std::map<std::string, PodRef, std::less<>> by_id_;
};

}  // namespace gpuwatch::host
