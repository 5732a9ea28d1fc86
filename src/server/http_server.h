// The HTTP side of `gpuwatch serve` (cpp-httplib): /metrics, /api/v1/*,
// /healthz, /readyz and the dashboard. Read-only: no endpoint changes the
// machine; every method but GET and HEAD is refused. Bounded: a fixed pool
// of workers and a short queue (503 beyond, the probes still answered; see
// admission.h), read and write timeouts, a deadline for the whole request,
// capped request line and header block (431), no request bodies (413), no
// ranges, one request a connection, a cap on live streams (503 beyond).
// Only requests naming this server in Host are answered (421: DNS
// rebinding). docs/API.md, docs/RELIABILITY.md.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "gpuwatch/status.h"
#include "host/leases.h"
#include "server/basic_auth.h"
#include "server/hub.h"
#include "server/web_config.h"

namespace gpuwatch::server {

struct HistoryQuery {
  int device = 0;
  std::vector<FieldId> fields;
  std::chrono::system_clock::time_point from, to;
  std::chrono::milliseconds step{0};
};
// Answers /api/v1/history; NotFound for an unknown device.
using HistorySource = std::function<Result<nlohmann::json>(const HistoryQuery&)>;
// Reads the machine's lease file (docs/select.md) once per request that shows
// leases; called from several HTTP workers at once.
using LeaseSource = std::function<Result<host::LeaseTable>()>;

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 9835;
  MetricsOptions metrics;
  ApiContext api;
  HistorySource history;
  LeaseSource leases;  // none: no leases shown, /api/v1/leases is 404
  std::string version;
  // The source is the demo fleet: "/" says DEMO before the first sample (after it, each
  // snapshot's own demo flag counts too).
  bool demo = false;
  int workers = 32;  // worker threads at most, started as connections need them
  int queue = 32;    // connections waiting for a worker; beyond, 503 (the probes still answer)
  // A worker idle this long ends.
  std::chrono::milliseconds idle_worker_exit{10'000};
  // A request must arrive whole within this long of reaching a worker (or of
  // the previous response on a keep-alive connection), however slowly it trickles.
  std::chrono::milliseconds request_deadline{10'000};
  int max_streams = 8;  // /api/v1/stream clients at once
  std::chrono::seconds read_timeout{5};
  std::chrono::seconds write_timeout{5};
  std::chrono::seconds keepalive{15};  // SSE comment interval
  WebConfig web;                       // TLS and basic auth (--web-config)
  // Host header names accepted besides the listen address's own (loopback
  // names, the bound address or, on all interfaces, every local address, the
  // machine's host name): others get 421. "*" accepts any (host_names.h).
  std::vector<std::string> allowed_hosts;
};

class HttpServer {
 public:
  // Binds (so a busy port fails here, with its address) and starts serving.
  static Result<std::unique_ptr<HttpServer>> Start(const HttpOptions& options,
                                                   std::shared_ptr<Hub> hub);
  ~HttpServer();
  void Stop();
  int port() const { return port_; }
  bool tls() const;
  // New basic-auth users, in effect for the next request (a changed
  // --web-config; TLS changes need a new server).
  void SetUsers(std::map<std::string, std::string> users);
  const AuthStats& auth_stats() const;

  struct Impl;

 private:
  HttpServer() = default;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  int port_ = 0;
};

// "127.0.0.1:9835", "[::1]:9835", ":9835" (all interfaces), "0.0.0.0:80".
Status ParseListen(std::string_view text, std::string& host, int& port);

}  // namespace gpuwatch::server
