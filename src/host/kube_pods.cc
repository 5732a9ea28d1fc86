#include "host/kube_pods.h"

#include <algorithm>
#include <system_error>

namespace gpuwatch::host {
namespace {

constexpr std::size_t kIdLength = 64;

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

std::optional<PodRef> ParseKubeletLogName(std::string_view name, std::string& id) {
  constexpr std::string_view kSuffix = ".log";
  if (!name.ends_with(kSuffix)) return std::nullopt;
  name.remove_suffix(kSuffix.size());
  if (name.size() < kIdLength + 1 || name[name.size() - kIdLength - 1] != '-') return std::nullopt;
  const std::string_view hex = name.substr(name.size() - kIdLength);
  if (!IsHex(hex)) return std::nullopt;
  name.remove_suffix(kIdLength + 1);
  const auto first = name.find('_');
  const auto second = first == std::string_view::npos ? first : name.find('_', first + 1);
  if (second == std::string_view::npos || name.find('_', second + 1) != std::string_view::npos) {
    return std::nullopt;
  }
  PodRef ref{std::string(name.substr(0, first)),
             std::string(name.substr(first + 1, second - first - 1)),
             std::string(name.substr(second + 1))};
  if (ref.pod.empty() || ref.namespace_.empty() || ref.container.empty()) return std::nullopt;
  id = std::string(hex);
  return ref;
}

KubePods::KubePods(std::filesystem::path dir) : dir_(std::move(dir)) {}

void KubePods::ListIfChanged() {
  std::error_code ec;
  const auto mtime = std::filesystem::last_write_time(dir_, ec);
  if (ec) {
    listed_ = true;  // no directory: not a Kubernetes node (or not mounted)
    by_id_.clear();
    return;
  }
  if (listed_ && mtime == listed_mtime_) return;
  std::map<std::string, PodRef, std::less<>> found;
  std::filesystem::directory_iterator it(dir_, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::string id;
    if (auto ref = ParseKubeletLogName(it->path().filename().native(), id)) {
      found.insert_or_assign(std::move(id), std::move(*ref));
    }
  }
  // A listing that failed (no permission) or was cut short keeps what was
  // known; the next change of the directory tries again.
  if (!ec) by_id_ = std::move(found);
  listed_mtime_ = mtime;
  listed_ = true;
}

std::optional<PodRef> KubePods::Find(std::string_view container_id) {
  if (container_id.size() != kIdLength) return std::nullopt;
  if (!listed_) ListIfChanged();
  if (auto it = by_id_.find(container_id); it != by_id_.end()) return it->second;
  ListIfChanged();
  if (auto it = by_id_.find(container_id); it != by_id_.end()) return it->second;
  return std::nullopt;
}

}  // namespace gpuwatch::host
