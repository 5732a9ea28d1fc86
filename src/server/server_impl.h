// What the parts of HttpServer share: http_server.cc sets the server up and
// runs it, request_gate.cc checks each request before any route,
// routes.cc answers /metrics, the probes, the JSON API and the dashboard,
// stream_route.cc the live stream. Private to src/server.
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "server/admission.h"
#include "server/basic_auth.h"
#include "server/http_server.h"
#include "server/metrics_body.h"

namespace gpuwatch::server {

struct HttpServer::Impl {
  std::unique_ptr<httplib::Server> owned;
  httplib::Server* server = nullptr;
  std::shared_ptr<Hub> hub;
  HttpOptions options;
  std::atomic<int> streams{0};
  std::atomic<bool> stopping{false};
  Authenticator auth;
  std::set<std::string> hosts;  // the Host names accepted ("*": any)
  std::shared_ptr<AdmissionStats> admission = std::make_shared<AdmissionStats>();
  MetricsHeads heads;  // /metrics' published part, per format
  int listen_fd = -1;  // the listening socket (the last one cpp-httplib made), Start's thread only

  // The lease file now; nullopt when this server shows no leases.
  std::optional<LeaseRead> ReadLeases() const {
    if (!options.leases) return std::nullopt;
    return options.leases();
  }

  // /healthz and /readyz, answered by a worker or, when none is free, by the
  // admission shedder.
  ProbeAnswer Probe(std::string_view path) const {
    if (path == "/healthz") return {200, "ok\n"};
    const std::string why = hub->NotReady();
    if (!why.empty()) return {503, "not ready: " + why + "\n"};
    const auto held = hub->Latest();
    const Published& p = *held;
    if (p.snapshot && p.snapshot->stale) {
      return {503, "not ready: the driver is not answering (serving the last snapshot)\n"};
    }
    return {200, "ready\n"};
  }
};

void SendJson(httplib::Response& res, const nlohmann::json& body, int status = 200);
void SendError(httplib::Response& res, int status, const std::string& message);

// Requests one connection may carry before the server closes it.
constexpr std::size_t kKeepAliveRequests = 100;

// Before any route (request_gate.cc): the Host check (DNS rebinding), GET and
// HEAD only, a bounded header count, no bodies, no ranges, then basic auth
// on everything but the probes. Handled: refused, with the answer in `res`.
httplib::Server::HandlerResponse CheckRequest(HttpServer::Impl& self, const httplib::Request& req,
                                              httplib::Response& res);

// /metrics, /healthz, /readyz, the /api/v1 documents and the dashboard
// (routes.cc).
void AddRoutes(HttpServer::Impl& self);

// /api/v1/stream: server-sent events, snapshots and events (stream_route.cc).
void AddStreamRoute(HttpServer::Impl& self);

}  // namespace gpuwatch::server
