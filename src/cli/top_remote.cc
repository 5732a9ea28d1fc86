// `top --remote` and `top --prometheus` (top_remote.h).
#include "cli/top_remote.h"

#include <cstdlib>
#include <fstream>
#include <utility>
#include <vector>

#include "tui/prometheus_fleet.h"
#include "tui/remote_api.h"

namespace gpuwatch::cli {
namespace {

// The password for --remote-user: from --remote-password-file, else
// $GPUWATCH_REMOTE_PASSWORD (never on the command line, where ps shows it).
Result<std::string> RemotePassword(const TopRemoteArgs& a) {
  if (!a.password_file.empty()) {
    std::ifstream in(a.password_file);
    std::string line;
    if (!in || !std::getline(in, line)) {
      return Status::InvalidArgument("--remote-password-file: cannot read " + a.password_file);
    }
    return line;
  }
  const char* env = std::getenv("GPUWATCH_REMOTE_PASSWORD");
  return std::string(env ? env : "");
}

// The credentials and TLS settings of the flags, on a daemon or a Prometheus.
template <typename Target>
void Authenticate(const TopRemoteArgs& a, const std::string& password, Target& target) {
  target.user = a.user;
  target.password = password;
  target.ca_file = a.ca_file;
  target.insecure = a.insecure;
}

}  // namespace

Result<StartTopFeed> ParseTopRemote(const TopRemoteArgs& args) {
  if (args.prometheus) {
    auto source = tui::ParsePrometheusUrl(args.prometheus_url);
    if (!source) return Status::InvalidArgument("--prometheus: " + source.error().message());
    return StartTopFeed([args, source = std::move(*source)](std::chrono::milliseconds interval)
                            -> Result<std::unique_ptr<tui::Feed>> {
      auto password = RemotePassword(args);
      if (!password) return password.error();
      tui::PrometheusSource s = source;
      Authenticate(args, *password, s);
      return tui::StartPrometheusFeed(std::move(s), interval);
    });
  }
  auto endpoints = tui::ParseEndpoints(args.remote_list);
  if (!endpoints) return Status::InvalidArgument("--remote: " + endpoints.error().message());
  return StartTopFeed([args, endpoints = std::move(*endpoints)](std::chrono::milliseconds interval)
                          -> Result<std::unique_ptr<tui::Feed>> {
    auto password = RemotePassword(args);
    if (!password) return password.error();
    std::vector<tui::RemoteEndpoint> list = endpoints;
    for (tui::RemoteEndpoint& e : list) Authenticate(args, *password, e);
    return tui::StartRemoteFeed(std::move(list), interval);
  });
}

}  // namespace gpuwatch::cli
