// `top`'s sources over HTTP: `gpuwatch serve` daemons (--remote) and the
// Prometheus that scrapes them (--prometheus). They are gpuwatch-full's
// (top_remote.cc, with cpp-httplib and OpenSSL; top_remote_unavailable.cc in
// a build without cpp-httplib), which gives ParseTopRemote to AddTopCommand
// (top_cli.h); gpuwatch-top, which draws this machine's GPUs without those
// libraries, hands such a command to gpuwatch-full.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "gpuwatch/status.h"
#include "tui/feed.h"

namespace gpuwatch::cli {

struct TopRemoteArgs {
  bool remote = false;      // --remote given (also empty: that is a mistake to name)
  bool prometheus = false;  // --prometheus given
  std::string remote_list;  // host:port,...
  std::string prometheus_url;
  std::string user;           // --remote-user
  std::string password_file;  // --remote-password-file
  std::string ca_file;        // --remote-ca
  bool insecure = false;      // --remote-insecure
};

// Starts the feed the checked addresses name.
using StartTopFeed =
    std::function<Result<std::unique_ptr<tui::Feed>>(std::chrono::milliseconds interval)>;

// Checks the addresses (a bad one is said before the terminal opens, also
// without one) and returns what starts their feed. `args` names --remote or
// --prometheus.
Result<StartTopFeed> ParseTopRemote(const TopRemoteArgs& args);

}  // namespace gpuwatch::cli
